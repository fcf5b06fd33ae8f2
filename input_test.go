// Tests of RunAgentInput: NextInput, marshalling, the one reading rule.

package aguistate

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nextInputConsumer returns a Consumer after a run with state, a user
// message, an activity message, a reasoning message and an input message
// without id.
func nextInputConsumer(t *testing.T) *Consumer {
	t.Helper()
	c := New(nil)
	for _, ev := range []string{
		`{"type":"RUN_STARTED","threadId":"th","runId":"r1","input":{"threadId":"th","runId":"r1","state":{"n":1.50},"messages":[{"role":"user","content":"no id"},{"id":"u1","role":"user","content":"hi","subagentRunId":null}]}}`,
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"act","activityType":"p","content":{}}`,
		`{"type":"REASONING_MESSAGE_CHUNK","messageId":"r1","delta":"why"}`,
		`{"type":"RUN_FINISHED","threadId":"th","runId":"r1"}`,
	} {
		require.NoError(t, c.Apply([]byte(ev)))
	}
	return c
}

// TestNextInput checks the next run's input field by field, as exact bytes.
func TestNextInput(t *testing.T) {
	msgs := `[{"role":"user","content":"no id"},{"id":"u1","role":"user","content":"hi","subagentRunId":null},{"id":"r1","role":"reasoning","content":"why"}]`
	cases := []struct {
		name, reason string
		opts         *RunOptions
		want         string
	}{
		{
			name:   "defaults",
			reason: "thread from RUN_STARTED, tools and context [], forwardedProps {}, activity messages removed, reasoning kept, messages verbatim",
			opts:   &RunOptions{RunID: "r2"},
			want:   `{"threadId":"th","runId":"r2","protocolVersion":"1.0","tools":[],"context":[],"forwardedProps":{},"state":{"n":1.50},"messages":` + msgs + `}`,
		},
		{
			name:   "every field",
			reason: "the options' fields are kept; raw JSON is compacted; thread, state and messages come from the Consumer",
			opts: &RunOptions{
				RunID: "r2", ParentRunID: "r1",
				Tools:          json.RawMessage(`[ {"name":"f"} ]`),
				Context:        json.RawMessage(`[]`),
				ForwardedProps: json.RawMessage(`{"a": 1e3}`),
				Resume:         json.RawMessage(`[{"interruptId":"i1","status":"resolved"}]`),
			},
			want: `{"threadId":"th","runId":"r2","protocolVersion":"1.0","parentRunId":"r1","tools":[{"name":"f"}],"context":[],"forwardedProps":{"a":1e3},"state":{"n":1.50},"messages":` + msgs + `,"resume":[{"interruptId":"i1","status":"resolved"}]}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opts := *c.opts
			in := nextInputConsumer(t).NextInput(c.opts)
			got, err := json.Marshal(in)
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got), c.reason)
			assert.Equal(t, opts, *c.opts, "the options are not changed")
		})
	}
}

// TestNextInputRunID checks that an empty RunID, and an empty ThreadID when
// no run has named a thread, become random UUIDs v4.
func TestNextInputRunID(t *testing.T) {
	c := New(nil)
	a, b := c.NextInput(nil), c.NextInput(nil)
	uuid4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	assert.Regexp(t, uuid4, a.RunID)
	assert.NotEqual(t, a.RunID, b.RunID)
	assert.Regexp(t, uuid4, a.ThreadID, "no run started: a new thread")
	got, err := json.Marshal(a)
	require.NoError(t, err)
	assert.Equal(t, `{"threadId":"`+a.ThreadID+`","runId":"`+a.RunID+`","protocolVersion":"1.0","tools":[],"context":[],"forwardedProps":{},"state":{},"messages":[]}`, string(got))
}

// TestNextInputRoundTrip checks that a new Consumer started from the next
// input holds the same state and messages (activity messages aside).
func TestNextInputRoundTrip(t *testing.T) {
	c := nextInputConsumer(t)
	data, err := json.Marshal(c.NextInput(nil))
	require.NoError(t, err)
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &fields), "the input is valid JSON")
	d := New(nil)
	require.NoError(t, startRun(d, string(data)))
	assert.Equal(t, c.State().String(), d.State().String())
	assert.Equal(t, `[{"role":"user","content":"no id"},{"id":"u1","role":"user","content":"hi","subagentRunId":null},{"id":"r1","role":"reasoning","content":"why"}]`, messagesJSON(d))
	again, err := json.Marshal(d.NextInput(&RunOptions{RunID: c.NextInput(nil).RunID}))
	require.NoError(t, err)
	var a, b map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &a))
	require.NoError(t, json.Unmarshal(again, &b))
	delete(a, "runId")
	delete(b, "runId")
	assert.Equal(t, a, b, "a second round trip gives the same input")
}

// TestNextInputInvalidRaw checks that MarshalJSON fails on invalid raw JSON.
func TestNextInputInvalidRaw(t *testing.T) {
	for _, in := range []RunAgentInput{
		{Tools: json.RawMessage(`[`)},
		{Context: json.RawMessage(`x`)},
		{ForwardedProps: json.RawMessage(`{"a"}`)},
		{Resume: json.RawMessage(`]`)},
	} {
		_, err := json.Marshal(in)
		assert.Error(t, err)
	}
}

// TestRunAgentInputUnmarshal checks that a RunAgentInput decodes with
// encoding/json and marshals back to the same value, state digits and
// message members included.
func TestRunAgentInputUnmarshal(t *testing.T) {
	t.Parallel()
	body := `{"threadId":"t","runId":"r","parentRunId":"p","tools":[{"name":"f"}],"context":[],"forwardedProps":{"x":1},"state":{"big":12345678901234567890,"f":1.0,"h":"<&>"},"messages":[{"role":"user","content":"no id"},{"id":"a","role":"assistant","content":"hi","metadata":{"k":[1e2]}}],"resume":[{"interruptId":"i1","status":"resolved"}]}`
	var in RunAgentInput
	require.NoError(t, json.Unmarshal([]byte(body), &in))
	assert.Equal(t, `{"big":12345678901234567890,"f":1.0,"h":"<&>"}`, in.State.String())
	require.Len(t, in.Messages, 2)
	assert.Equal(t, "", in.Messages[0].ID())
	assert.Equal(t, "a", in.Messages[1].ID())
	out, err := in.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, body, string(out), "a round trip keeps every byte")

	for _, bad := range []string{
		`{"state":{"a":1,"a":2}}`,
		`{"messages":[{"id":"a"}]}`,
		`{"messages":[1]}`,
	} {
		assert.Error(t, json.Unmarshal([]byte(bad), &in), bad)
	}
	var m Message
	assert.ErrorIs(t, m.UnmarshalJSON([]byte(`{"id":1,"role":"user"}`)), errMalformedMessages)
	var v Value
	assert.ErrorIs(t, v.UnmarshalJSON([]byte(`[1,]`)), errDecode)
}

// TestRunAgentInputNamesAreExact checks that only the exact member names
// count, unlike encoding/json's default, and that null reads as nil.
func TestRunAgentInputNamesAreExact(t *testing.T) {
	t.Parallel()
	var in RunAgentInput
	require.NoError(t, json.Unmarshal([]byte(`{"threadId":"t","tools":[{"name":"real"}],"TOOLS":[{"name":"evil"}],"Context":5,"forwardedprops":{"x":1},"resume":null}`), &in))
	assert.Equal(t, `[{"name":"real"}]`, string(in.Tools))
	assert.Nil(t, in.Context)
	assert.Nil(t, in.ForwardedProps)
	assert.Nil(t, in.Resume)
	out, err := in.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"threadId":"t","runId":"","tools":[{"name":"real"}],"context":[],"forwardedProps":{},"messages":[]}`, string(out))
	assert.ErrorIs(t, json.Unmarshal([]byte(`{"threadId":1}`), &in), ErrMalformedEvent)
}

// TestRunInputOneRule checks that StartRun, RUN_STARTED's "input" and
// RunAgentInput.UnmarshalJSON accept and refuse the same run inputs.
func TestRunInputOneRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input, reason string
		ok            bool
	}{
		{`{}`, "every member is optional", true},
		{`{"threadId":"t","runId":"r","state":{"a":1},"messages":[{"role":"user","content":"x"}]}`, "messages may lack an id", true},
		{`{"threadId":null,"messages":null,"tools":null,"context":null,"resume":null,"forwardedProps":null}`, "null reads as absent", true},
		{`{"state":null}`, "the state null is a state", true},
		{`{"forwardedProps":5,"tools":[],"context":[],"resume":[],"x-other":{}}`, "forwardedProps is any value; other members are ignored", true},
		{`{"threadId":5,"state":{"a":1}}`, "threadId is a string", false},
		{`{"runId":[]}`, "runId is a string", false},
		{`{"parentRunId":1}`, "parentRunId is a string", false},
		{`{"messages":{}}`, "messages is an array", false},
		{`{"messages":[{"id":"a"}]}`, "a message has a role", false},
		{`{"tools":{}}`, "tools is an array", false},
		{`{"context":"x"}`, "context is an array", false},
		{`{"resume":{}}`, "resume is an array", false},
		{`[]`, "a run input is an object", false},
		{`{"state":{"a":1,"a":2}}`, "no duplicate member names", false},
	}
	for _, tt := range tests {
		started := startRun(New(nil), tt.input)
		var in RunAgentInput
		unmarshal := json.Unmarshal([]byte(tt.input), &in)
		runStarted := New(nil).Apply([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":` + tt.input + `}`))
		for name, err := range map[string]error{"StartRun": started, "UnmarshalJSON": unmarshal, "RUN_STARTED": runStarted} {
			if tt.ok {
				assert.NoError(t, err, "%s %s: %s", name, tt.input, tt.reason)
			} else {
				assert.ErrorIs(t, err, ErrMalformedEvent, "%s %s: %s", name, tt.input, tt.reason)
			}
		}
	}
}
