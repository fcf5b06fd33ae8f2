// Tests of token usage: read typed from RUN_FINISHED and RUN_ERROR, kept
// verbatim, checked as the schema says.

package aguistate

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	started := `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`
	agent, _ := scriptedAgent(t, func(body map[string]json.RawMessage, _ *http.Request) []string {
		if string(body["forwardedProps"]) == `{"fail":true}` {
			return []string{started, `{"type":"RUN_ERROR","message":"boom","usage":[{"provider":"openai","model":"gpt-5","inputTokens":12}]}`}
		}
		return []string{started, `{"type":"RUN_FINISHED","threadId":"t","runId":"r","usage":[` +
			`{"provider":"anthropic","model":"claude","inputTokens":658,"outputTokens":188,"totalTokens":846,"reasoningTokens":128,"cachedInputTokens":0,"cacheWriteInputTokens":5,"costUsd":0.01},` +
			`{"inputTokens":1.0e1,"outputTokens":9007199254740991}]}`}
	})
	c := New(nil)
	res, err := c.RunAgent(context.Background(), agent, nil)
	require.NoError(t, err)
	require.Len(t, res.Usage, 2)
	first := res.Usage[0]
	assert.Equal(t, `{"provider":"anthropic","model":"claude","inputTokens":658,"outputTokens":188,"totalTokens":846,"reasoningTokens":128,"cachedInputTokens":0,"cacheWriteInputTokens":5,"costUsd":0.01}`,
		first.Value.String(), "kept verbatim, members this package does not know included")
	first.Value = Value{}
	assert.Equal(t, Usage{Provider: "anthropic", Model: "claude", InputTokens: 658, OutputTokens: 188, TotalTokens: 846,
		ReasoningTokens: 128, CacheWriteInputTokens: 5}, first)
	assert.Equal(t, int64(10), res.Usage[1].InputTokens, "a count of any spelling whose value is an integer")
	assert.Equal(t, int64(1<<53-1), res.Usage[1].OutputTokens, "the largest count")

	_, err = c.RunAgent(context.Background(), agent, &RunOptions{ForwardedProps: json.RawMessage(`{"fail":true}`)})
	var re *RunError
	require.ErrorAs(t, err, &re)
	require.Len(t, re.Usage, 1, "a failed run's usage is on its RunError")
	assert.Equal(t, int64(12), re.Usage[0].InputTokens)
	assert.Equal(t, "gpt-5", re.Usage[0].Model)
}

// TestUsageMalformed checks that a usage the schema refuses is fatal, as
// in the reference client's runAgent: the event is not applied.
func TestUsageMalformed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, usage, reason string }{
		{"not an array", `{"inputTokens":1}`, "usage is an array"},
		{"an entry that is not an object", `[1]`, "each entry is an object"},
		{"a fraction", `[{"inputTokens":1.5}]`, "a count is an integer"},
		{"negative", `[{"outputTokens":-1}]`, "a count is not negative"},
		{"too large", `[{"totalTokens":9007199254740992}]`, "a count is at most 2^53-1"},
		{"a string count", `[{"inputTokens":"12"}]`, "a count is a number"},
		{"a number provider", `[{"provider":1}]`, "provider and model are strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, ev := range []string{
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r","usage":` + tc.usage + `}`,
				`{"type":"RUN_ERROR","message":"m","usage":` + tc.usage + `}`,
			} {
				c := New(nil)
				require.NoError(t, c.Apply([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)))
				assert.ErrorIs(t, c.Apply([]byte(ev)), ErrMalformedEvent, tc.reason)
				assert.True(t, c.Running(), "the run did not end")
			}
		})
	}
	c := New(nil)
	require.NoError(t, c.Apply([]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r","usage":null}`)), "null reads as absent")
}
