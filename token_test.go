// Tests of the short path of token events.

package aguistate

import (
	"testing"
	"unsafe"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tokenTexts are event texts near the token shape: those scanToken takes,
// and those it leaves to the general path.
var tokenTexts = []struct {
	name, text string
	short      bool
}{
	{"content", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":" the"}`, true},
	{"reasoning", `{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"hm"}`, true},
	{"args", `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"a\":"}`, true},
	{"other order", ` { "delta" : "x" ,"messageId":"m1", "type":"TEXT_MESSAGE_CONTENT" } `, true},
	{"escapes", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a\n\"b\\ \u00e9 \ud83d\ude00 \ud83d"}`, true},
	{"utf-8", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"été 😀"}`, true},
	{"empty delta", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":""}`, true},
	{"empty id", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"","delta":"x"}`, false},
	{"id name of another type", `{"type":"TEXT_MESSAGE_CONTENT","toolCallId":"m1","delta":"x"}`, false},
	{"metadata", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x","metadata":{}}`, false},
	{"two members", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1"}`, false},
	{"duplicate", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","messageId":"m2"}`, false},
	{"duplicate delta", `{"delta":"a","type":"TEXT_MESSAGE_CONTENT","delta":"b"}`, false},
	{"number delta", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":1}`, false},
	{"escaped name", `{"type":"TEXT_MESSAGE_CONTENT","messageI\u0064":"m1","delta":"x"}`, false},
	{"escaped type", `{"type":"TEXT_MESSAGE_CONTEN\u0054","messageId":"m1","delta":"x"}`, false},
	{"other type", `{"type":"TEXT_MESSAGE_START","messageId":"m1","delta":"x"}`, false},
	{"trailing text", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x"}x`, false},
	{"trailing comma", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x",}`, false},
	{"no close", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x"`, false},
	{"control character", "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"a\tb\"}", false},
	{"invalid UTF-8", "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"a\xffb\"}", false},
	{"bad escape", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a\xb"}`, false},
	{"unended string", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a\"}`, false},
}

// TestScanToken checks that scanToken takes the token events of the
// common shape and reads them as jsonv.Parse does, member order included,
// and leaves every other text to the general path.
func TestScanToken(t *testing.T) {
	for _, tc := range tokenTexts {
		t.Run(tc.name, func(t *testing.T) {
			tk, ok := scanToken([]byte(tc.text), "")
			require.Equal(t, tc.short, ok)
			if !ok {
				return
			}
			want, err := jsonv.Parse([]byte(tc.text), 0)
			require.NoError(t, err)
			assert.Equal(t, string(jsonv.Marshal(want)), string(jsonv.Marshal(tk.node())))
		})
	}
}

// TestScanTokenSharesTheLastID checks that a token to the message of the
// last one shares its id rather than making one.
func TestScanTokenSharesTheLastID(t *testing.T) {
	last := string([]byte("m1"))
	tk, ok := scanToken([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x"}`), last)
	require.True(t, ok)
	assert.Same(t, unsafeData(last), unsafeData(tk.id))
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

// TestTokensApplyAsEvents checks that a stream of token events, some of
// the short shape and some not, makes the thread and the Changes that the
// general path makes: the same messages, warnings and pieces, and events
// whose values are the events given.
func TestTokensApplyAsEvents(t *testing.T) {
	events := []string{
		`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"no message"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`,
		`{"delta":"lo \ud83d","type":"TEXT_MESSAGE_CONTENT","messageId":"m1"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\ude00 x","metadata":{"a":1}}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"not open"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"ended"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"q\":"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"1}"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
		`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"hm"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m3","delta":"chunk"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m3","delta":" after a chunk"}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m3","delta":"after the run"}`,
	}
	run := func(short bool) ([]string, []Change, error) {
		c := New(nil)
		var changes []Change
		c.Subscribe(func(ch Change) { changes = append(changes, ch) })
		for _, e := range events {
			text := []byte(e)
			if !short { // a member the short path does not take, which changes nothing
				text = []byte(`{"_":0,` + e[1:])
			}
			if err := c.Apply(text); err != nil {
				return nil, changes, err
			}
			clear(text) // the Consumer keeps nothing of the text it was given
		}
		var msgs []string
		for _, m := range c.Messages() {
			b, err := m.MarshalJSON()
			require.NoError(t, err)
			msgs = append(msgs, string(b))
		}
		return msgs, changes, nil
	}
	shortMsgs, shortChanges, err := run(true)
	require.Error(t, err) // the last event, after the run
	longMsgs, longChanges, err2 := run(false)
	require.Error(t, err2)
	assert.Equal(t, longMsgs, shortMsgs)
	require.Len(t, shortChanges, len(longChanges))
	for i, ch := range shortChanges {
		long := longChanges[i]
		b, err := ch.Event.MarshalJSON()
		require.NoError(t, err)
		assert.JSONEq(t, events[i], string(b), "event %d", i+1)
		assert.Equal(t, long.Pieces, ch.Pieces, "event %d", i+1)
		assert.Equal(t, long.Replaced, ch.Replaced, "event %d", i+1)
		assert.Equal(t, long.Warning == nil, ch.Warning == nil, "event %d", i+1)
		if ch.Warning != nil {
			assert.Equal(t, long.Warning.Error(), ch.Warning.Error(), "event %d", i+1)
		}
	}
}

// FuzzScanToken checks that whatever scanToken takes, jsonv.Parse reads
// as the same event.
func FuzzScanToken(f *testing.F) {
	for _, tc := range tokenTexts {
		f.Add([]byte(tc.text))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		tk, ok := scanToken(text, "m1")
		if !ok {
			return
		}
		want, err := jsonv.Parse(text, 0)
		require.NoError(t, err)
		assert.Equal(t, string(jsonv.Marshal(want)), string(jsonv.Marshal(tk.node())))
	})
}
