// Tests of events: pass-through types, warnings, the table of event types,
// Event.MarshalJSON.

package aguistate

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPassThroughEvents checks decision 9: RAW, CUSTOM, SUBAGENT_* and
// unknown events change nothing and reach subscribers with every member
// (reference case 43).
func TestPassThroughEvents(t *testing.T) {
	events := []string{
		`{"type":"RAW","event":{"e":1},"source":"s","timestamp":1}`,
		`{"type":"CUSTOM","name":"n","value":1.50,"metadata":{"m":1}}`,
		`{"type":"SUBAGENT_STARTED","subagentRunId":"s1","name":"x","parentToolCallId":"c"}`,
		`{"type":"SUBAGENT_FINISHED","subagentRunId":"s1","outcome":{"type":"success"}}`,
		`{"type":"SUBAGENT_ERROR","subagentRunId":"s1","message":"m","code":"E"}`,
		`{"type":"WHATEVER","foo":1,"bar":[true,null]}`,
	}
	c := New(nil)
	require.NoError(t, startRun(c, `{"state":{"a":1},"messages":[{"id":"u1","role":"user","content":"hi"}]}`))
	var got []string
	c.Subscribe(func(ch Change) {
		assert.False(t, ch.StateChanged || ch.MessagesChanged() || ch.Warning != nil, "%s changes nothing", ch.Event.Type)
		got = append(got, ch.Event.Value().String())
	})
	for _, ev := range events {
		require.NoError(t, c.Apply([]byte(ev)))
	}
	assert.Equal(t, events, got)
	assert.Equal(t, `{"a":1}`, c.State().String())
	assert.Equal(t, `[{"id":"u1","role":"user","content":"hi"}]`, messagesJSON(c))
}

// TestWarnings checks that skipped events report ErrNoTarget or
// ErrPatchFailed in Change.Warning, and that only a failing STATE_DELTA
// marks the state diverged.
func TestWarnings(t *testing.T) {
	c := New(nil)
	var changes []Change
	c.Subscribe(func(ch Change) { changes = append(changes, ch) })
	events := []struct {
		event    string
		warn     error
		diverged bool
	}{
		{`{"type":"ACTIVITY_SNAPSHOT","messageId":"act","activityType":"p","content":{}}`, nil, false},
		{`{"type":"TEXT_MESSAGE_START","messageId":"act"}`, ErrNoTarget, false},
		{`{"type":"TEXT_MESSAGE_CONTENT","messageId":"nope","delta":"x"}`, ErrNoTarget, false},
		{`{"type":"TOOL_CALL_ARGS","toolCallId":"nope","delta":"x"}`, ErrNoTarget, false},
		{`{"type":"ACTIVITY_DELTA","messageId":"act","activityType":"p","patch":[{"op":"test","path":"/x","value":1}]}`, ErrPatchFailed, false},
		{`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/x"}]}`, ErrPatchFailed, true},
		{`{"type":"TEXT_MESSAGE_END","messageId":"nope"}`, ErrNoTarget, true},
		{`{"type":"STATE_SNAPSHOT","snapshot":{}}`, nil, false},
	}
	for _, e := range events {
		require.NoError(t, c.Apply([]byte(e.event)))
	}
	require.Len(t, changes, len(events))
	for i, e := range events {
		ch := changes[i]
		if e.warn == nil {
			assert.NoError(t, ch.Warning, e.event)
		} else {
			var ee *EventError
			require.ErrorAs(t, ch.Warning, &ee, e.event)
			assert.Equal(t, i+1, ee.Position)
			assert.ErrorIs(t, ch.Warning, e.warn, e.event)
			assert.False(t, ch.MessagesChanged(), "a skipped event changes no message: %s", e.event)
		}
		assert.Equal(t, e.diverged, ch.Diverged, e.event)
	}
}

// TestEventTypes checks the eventTypes table against the AG-UI 1.0 event
// set: every type the protocol defines has a row or is passed over, the
// pre-1.0 types the reference client converts have one, and each chunk
// kind names a row that manages its own streams.
func TestEventTypes(t *testing.T) {
	t.Parallel()
	passedOver := []string{"RAW"}
	protocol := []string{
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TEXT_MESSAGE_CHUNK",
		"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK", "TOOL_CALL_RESULT",
		"REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END",
		"REASONING_MESSAGE_CHUNK", "REASONING_END", "REASONING_ENCRYPTED_VALUE",
		"STATE_SNAPSHOT", "STATE_DELTA", "MESSAGES_SNAPSHOT", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA",
		"RAW", "CUSTOM", "RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "STEP_STARTED", "STEP_FINISHED",
		"SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR",
	}
	for _, typ := range protocol {
		_, row := eventTypes[typ]
		assert.True(t, row != slices.Contains(passedOver, typ), "%s: a row, or passed over", typ)
	}
	legacy := []string{ // read as their 1.0 equivalents, as the reference client's runAgent reads them
		"THINKING_START", "THINKING_END", "THINKING_TEXT_MESSAGE_START", "THINKING_TEXT_MESSAGE_CONTENT", "THINKING_TEXT_MESSAGE_END",
	}
	for _, typ := range legacy {
		assert.Contains(t, eventTypes, typ, "a pre-1.0 type the reference client converts")
	}
	assert.Len(t, eventTypes, len(protocol)-len(passedOver)+len(legacy), "no row for a type the protocol does not define, or no longer defines")
	for _, k := range []constructKind{textConstruct, reasoningConstruct, toolConstruct} {
		assert.Equal(t, ownChunks, eventTypes[k.chunkType()].chunks, "%s", k)
		assert.Equal(t, k, chunkKindOf(k.chunkType()))
	}
	assert.Zero(t, chunkKindOf("TEXT_MESSAGE_START"))
}

// TestEventMarshalJSON checks that an Event marshals to the event as
// received, not to its Go fields.
func TestEventMarshalJSON(t *testing.T) {
	t.Parallel()
	c := New(nil)
	var got []byte
	c.Subscribe(func(ch Change) {
		var err error
		got, err = json.Marshal(ch.Event)
		require.NoError(t, err)
	})
	ev := `{"type":"CUSTOM","name":"n","value":1.50,"x":[1e2]}`
	require.NoError(t, c.Apply([]byte(" "+ev+"\n")))
	assert.Equal(t, ev, string(got))
}
