// Tests of Message: kept verbatim, read by the messages rules, and the
// metadata merge.

package aguistate

import (
	"encoding/json"
	"fmt"
	"strings"
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
// {...held.metadata, ...event.metadata}, member by member and, for many
// members, as a new object.
func TestMergeMetadata(t *testing.T) {
	t.Parallel()
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf(`"m%d":7`, i))
	}
	manyMembers := strings.Join(many, ",")
	tests := []struct {
		name, held, meta, want string
	}{
		{"none", `{"id":"m"}`, ``, `{"id":"m"}`},
		{"new", `{"id":"m"}`, `{"a":1}`, `{"id":"m","metadata":{"a":1}}`},
		{"merge", `{"metadata":{"a":1,"b":2},"id":"m"}`, `{"b":3,"c":4}`, `{"metadata":{"a":1,"b":3,"c":4},"id":"m"}`},
		{"not an object", `{"id":"m","metadata":5}`, `{"a":1}`, `{"id":"m","metadata":{"a":1}}`},
		{"empty", `{"id":"m","metadata":{}}`, `{"a":1}`, `{"id":"m","metadata":{"a":1}}`},
		{"many", `{"metadata":{"a":1,"m0":0,"z":2},"id":"m"}`, `{` + manyMembers + `,"a":3}`,
			`{"metadata":{"a":3,"m0":7,"z":2,` + strings.TrimPrefix(manyMembers, `"m0":7,`) + `},"id":"m"}`},
	}
	for _, tt := range tests {
		var meta *jsonv.Node
		if tt.meta != "" {
			meta = mustParse(t, tt.meta)
		}
		held := mustParse(t, tt.held)
		assert.Equal(t, tt.want, string(jsonv.Marshal((&txn{}).mergeMetadata(held, meta))), tt.name)
		assert.Equal(t, tt.held, string(jsonv.Marshal(held)), "%s: the held message is not changed", tt.name)
	}
}

// TestMessageAccessors checks the typed reads of each AG-UI 1.0 message
// shape, and that reading changes nothing of what MarshalJSON returns.
func TestMessageAccessors(t *testing.T) {
	t.Parallel()
	type read struct {
		Name, Text, Content, ToolCallID, ActivityType, EncryptedValue string
		Parts                                                         []Part
		ToolCalls                                                     []ToolCall
	}
	tests := []struct {
		name, reason, text string
		want               read
	}{
		{"user text", "string content is the text", `{"id":"u","role":"user","content":"hi","name":"Ann","encryptedValue":"e1"}`,
			read{Name: "Ann", Text: "hi", Content: `"hi"`, EncryptedValue: "e1"}},
		{"user parts", "text parts join in order; media parts are read with their source",
			`{"id":"u","role":"user","content":[{"type":"text","text":"look "},{"type":"image","source":{"type":"url","value":"https://x/a.png","mimeType":"image/png"}},{"type":"text","text":"here"},7]}`,
			read{Text: "look here", Content: `[{"type":"text","text":"look "},{"type":"image","source":{"type":"url","value":"https://x/a.png","mimeType":"image/png"}},{"type":"text","text":"here"},7]`,
				Parts: []Part{{Type: "text", Text: "look "}, {Type: "image", Source: "url", Value: "https://x/a.png", MIMEType: "image/png"}, {Type: "text", Text: "here"}}}},
		{"assistant tool calls", "each call's id, name, arguments as streamed, encrypted value",
			`{"id":"a","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":"},"encryptedValue":"e2"},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]}`,
			read{Content: "null", ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: `{"x":`, EncryptedValue: "e2"}, {ID: "c2", Name: "g", Arguments: "{}"}}}},
		{"tool", "a tool message names the call it answers", `{"id":"t","role":"tool","content":"42","toolCallId":"c1"}`,
			read{Text: "42", Content: `"42"`, ToolCallID: "c1"}},
		{"activity", "an activity's content is an object: no text", `{"id":"x","role":"activity","activityType":"PLAN","content":{"steps":[1]}}`,
			read{Content: `{"steps":[1]}`, ActivityType: "PLAN"}},
		{"wrong types", "members of the wrong type read as empty", `{"id":"w","role":"user","name":5,"content":{"a":1},"toolCalls":{},"toolCallId":[]}`,
			read{Content: `{"a":1}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := mustMessage(t, tt.text)
			got := read{Name: m.Name(), Text: m.Text(), Content: m.Content().String(), Parts: m.Parts(), ToolCalls: m.ToolCalls(),
				ToolCallID: m.ToolCallID(), ActivityType: m.ActivityType(), EncryptedValue: m.EncryptedValue()}
			assert.Equal(t, tt.want, got, tt.reason)
			out, err := m.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, tt.text, string(out), "verbatim after reading")
		})
	}
	var zero Message
	assert.Equal(t, read{Content: "null"}, read{Name: zero.Name(), Text: zero.Text(), Content: zero.Content().String(),
		Parts: zero.Parts(), ToolCalls: zero.ToolCalls()}, "the zero Message reads as empty")
}

// TestMessageZero checks that a Message that is no message is an error
// where it would be sent, never null: the Message{ID: "u1"}.
func TestMessageZero(t *testing.T) {
	t.Parallel()
	_, err := Message{}.MarshalJSON()
	assert.ErrorContains(t, err, "the zero Message")
	_, err = json.Marshal([]Message{{}})
	assert.Error(t, err)
	_, err = RunAgentInput{Messages: []Message{{}}}.MarshalJSON()
	assert.ErrorContains(t, err, "RunAgentInput.Messages[0]")
	err = New(nil).StartRun(RunAgentInput{Messages: []Message{{}}})
	assert.ErrorIs(t, err, ErrMalformedEvent)
}
