// Tests of Message: kept verbatim, read by the messages rules, and the
// metadata merge.

package aguistate

import (
	"encoding/json"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessageVerbatim(t *testing.T) {
	t.Parallel()
	text := `{"role":"user","id":"u1","content":[{"type":"text","text":"hi"}],"x-extra":1.50,"subagentRunId":null}`
	var m Message
	require.NoError(t, json.Unmarshal([]byte(text), &m))
	assert.Equal(t, "u1", m.ID())
	assert.Equal(t, "user", m.Role())
	out, err := m.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, text, string(out), "every member as sent, in order")
}

func TestMessageUnmarshalRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, reason string
		ok           bool
	}{
		{`{"role":"user"}`, "an id may be missing, as in a run input", true},
		{`{"id":"a","role":"x-custom"}`, "any string role", true},
		{`{"id":"a"}`, "a role is required", false},
		{`{"id":"","role":"user"}`, "an id is not empty", false},
		{`{"id":1,"role":"user"}`, "an id is a string", false},
		{`[]`, "a message is an object", false},
		{`{"id":"a","role":"user","id":"b"}`, "no duplicate member names", false},
	}
	for _, tt := range tests {
		var m Message
		err := m.UnmarshalJSON([]byte(tt.text))
		if tt.ok {
			assert.NoError(t, err, tt.reason)
		} else {
			assert.ErrorIs(t, err, ErrMalformedEvent, tt.reason)
		}
	}
}

// TestMergeMetadata checks the reference client's mergeMetadata:
// {...held.metadata, ...event.metadata}.
func TestMergeMetadata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, held, meta, want string
	}{
		{"none", `{"id":"m"}`, ``, `{"id":"m"}`},
		{"new", `{"id":"m"}`, `{"a":1}`, `{"id":"m","metadata":{"a":1}}`},
		{"merge", `{"metadata":{"a":1,"b":2},"id":"m"}`, `{"b":3,"c":4}`, `{"metadata":{"a":1,"b":3,"c":4},"id":"m"}`},
		{"not an object", `{"id":"m","metadata":5}`, `{"a":1}`, `{"id":"m","metadata":{"a":1}}`},
	}
	for _, tt := range tests {
		var meta *jsonv.Node
		if tt.meta != "" {
			meta = mustParse(t, tt.meta)
		}
		held := mustParse(t, tt.held)
		assert.Equal(t, tt.want, string(jsonv.Marshal(mergeMetadata(held, meta))), tt.name)
		assert.Equal(t, tt.held, string(jsonv.Marshal(held)), "%s: the held message is not changed", tt.name)
	}
}
