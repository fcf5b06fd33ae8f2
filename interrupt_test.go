// Tests of Resume and the rule that a run starts only with every pending
// interrupt answered.

package aguistate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// interrupted returns a Consumer whose last run ended with interrupts (a
// JSON array).
func interrupted(t *testing.T, interrupts string) *Consumer {
	t.Helper()
	c := New(nil)
	require.NoError(t, c.Apply([]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":`+interrupts+`}}`)))
	return c
}

func TestResume(t *testing.T) {
	t.Parallel()
	c := interrupted(t, `[{"id":"i1","reason":"a"},{"id":"i2","reason":"b"}]`)
	var seen []string
	resume, err := c.Resume(func(in Value) (any, bool) {
		seen = append(seen, in.String())
		var id string
		require.NoError(t, in.Decode("/id", &id))
		return map[string]string{"answer": id}, id == "i1"
	})
	require.NoError(t, err)
	assert.Equal(t, []string{`{"id":"i1","reason":"a"}`, `{"id":"i2","reason":"b"}`}, seen, "each interrupt, in order")
	assert.Equal(t, `[{"interruptId":"i1","status":"resolved","payload":{"answer":"i1"}},{"interruptId":"i2","status":"cancelled"}]`, string(resume))
	assert.NoError(t, c.StartRun(c.NextInput(&RunOptions{Resume: resume})), "the entries answer every interrupt")

	none, err := New(nil).Resume(func(Value) (any, bool) { t.Fatal("no interrupt to answer"); return nil, false })
	assert.NoError(t, err)
	assert.Nil(t, none, "no interrupt pending: no resume")

	_, err = c.Resume(func(Value) (any, bool) { return func() {}, true })
	assert.ErrorContains(t, err, "resume payload")

	err = New(nil).Apply([]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"reason":"no id"}]}}`))
	assert.ErrorIs(t, err, ErrMalformedEvent, "an interrupt without an id could never be answered (AG-UI Interrupt.id is required)")
}

func TestCheckResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason, interrupts, resume, want string // want: "" for no error
	}{
		{"none pending", "resume is free when nothing is pending", `[]`, ``, ""},
		{"extra entries", "entries for other ids are passed on, as in the reference client", `[{"id":"i1"}]`,
			`[{"interruptId":"i1","status":"cancelled"},{"interruptId":"old","status":"resolved"}]`, ""},
		{"not an array", "resume is an array", `[{"id":"i1"}]`, `{"interruptId":"i1"}`, "resume is an object, not an array"},
		{"not JSON", "resume is JSON", `[{"id":"i1"}]`, `[`, "(in resume)"},
		{"entry not an object", "each entry is an object", `[{"id":"i1"}]`, `[1]`, "resume entry 0 is a number, not an object"},
		{"no interruptId", "each entry names its interrupt", `[{"id":"i1"}]`, `[{"status":"resolved"}]`, `"interruptId" is missing`},
		{"expiresAt not a time", "an expiresAt that is not RFC 3339 never expires", `[{"id":"i1","expiresAt":"soon"}]`,
			`[{"interruptId":"i1","status":"resolved"}]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := interrupted(t, tt.interrupts)
			var resume json.RawMessage
			if tt.resume != "" {
				resume = json.RawMessage(tt.resume)
			}
			err := c.StartRun(RunAgentInput{Resume: resume})
			if tt.want == "" {
				assert.NoError(t, err, tt.reason)
				return
			}
			assert.ErrorContains(t, err, tt.want, tt.reason)
		})
	}
}
