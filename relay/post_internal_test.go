// Tests and benchmarks of a POST's check of the record of its run's input.

package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aguistate/aguistate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckRecord checks the verdicts of checkRecord on small threads near
// their limits: the record of the input (its RUN_STARTED, its state's
// STATE_SNAPSHOT) must fit a new Consumer and, when it adds messages, the
// thread; the thread itself is left as it was.
func TestCheckRecord(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("x", 100)
	msg := func(id string) string { return `{"id":"` + id + `","role":"user","content":"` + text + `"}` }
	start := `{"type":"RUN_STARTED","threadId":"t","runId":"r0","input":{"threadId":"t","runId":"r0","messages":[` + msg("u1") + `,` + msg("u2") + `]}}`
	open := []string{start, `{"type":"TEXT_MESSAGE_START","messageId":"a1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"Hel"}`}
	finished := []string{start, `{"type":"RUN_FINISHED","threadId":"t","runId":"r0"}`}
	const prefix = "aguistate: the run input cannot be recorded: "
	tests := []struct {
		name, reason string
		opts         aguistate.Options
		thread       []string // its events
		input        string
		want         string // the error, "" for none
	}{
		{"within", "room for one more message", aguistate.Options{MaxMessages: 3}, finished,
			`{"threadId":"t","runId":"r1","messages":[` + msg("u1") + `,` + msg("u3") + `]}`, ""},
		{"held only", "no message added: the thread's totals are not checked", aguistate.Options{MaxMessages: 2}, finished,
			`{"threadId":"t","runId":"r1","messages":[` + msg("u1") + `,` + msg("u2") + `]}`, ""},
		{"MaxMessages", "a third message", aguistate.Options{MaxMessages: 2}, finished,
			`{"threadId":"t","runId":"r1","messages":[` + msg("u1") + `,` + msg("u3") + `]}`,
			prefix + "its RUN_STARTED: limit exceeded: 3 messages, more than MaxMessages (2)"},
		{"repeated id", "an id the input repeats adds one message", aguistate.Options{MaxMessages: 3}, finished,
			`{"threadId":"t","runId":"r1","messages":[` + msg("u3") + `,` + msg("u3") + `]}`, ""},
		{"MaxTotalMessageSize", "the messages past their total", aguistate.Options{MaxTotalMessageSize: 400}, finished,
			`{"threadId":"t","runId":"r1","messages":[` + msg("u3") + `]}`,
			prefix + "its RUN_STARTED: limit exceeded: the messages would be 414 bytes in all, more than MaxTotalMessageSize (400)"},
		{"open message", "the record ends the run on the clone: the thread's open message stays open", aguistate.Options{MaxMessages: 4}, open,
			`{"threadId":"t","runId":"r1","messages":[` + msg("u3") + `]}`, ""},
		{"open message, MaxMessages", "the open message counts", aguistate.Options{MaxMessages: 3}, open,
			`{"threadId":"t","runId":"r1","messages":[` + msg("u3") + `]}`,
			prefix + "its RUN_STARTED: limit exceeded: 4 messages, more than MaxMessages (3)"},
		{"MaxMessageSize", "one message too large for any thread", aguistate.Options{MaxMessageSize: 50}, nil,
			`{"threadId":"t","runId":"r1","messages":[` + msg("u3") + `]}`,
			prefix + `its RUN_STARTED: limit exceeded: message "u3" would be 138 bytes, more than 50`},
		{"MaxStateSize", "the state's STATE_SNAPSHOT", aguistate.Options{MaxStateSize: 10}, finished,
			`{"threadId":"t","runId":"r1","state":{"s":"` + text + `"},"messages":[]}`,
			prefix + "its STATE_SNAPSHOT: limit exceeded: the state would be 108 bytes, more than 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := New(nil, &Options{Consumer: &tt.opts})
			defer r.Close()
			c := aguistate.New(r.o.Consumer)
			for _, ev := range tt.thread {
				require.NoError(t, c.Apply([]byte(ev)))
			}
			before := string(c.Checkpoint())
			var in aguistate.RunAgentInput
			require.NoError(t, in.UnmarshalJSON([]byte(tt.input)))
			var raw struct{ State json.RawMessage }
			require.NoError(t, json.Unmarshal([]byte(tt.input), &raw))
			err := r.checkRecord(&thread{r: r, id: "t", c: c}, in, raw.State)
			if tt.want == "" {
				assert.NoError(t, err, tt.reason)
			} else {
				assert.EqualError(t, err, tt.want, tt.reason)
			}
			assert.Equal(t, before, string(c.Checkpoint()), "the thread is as it was")
		})
	}
}

// bigThread returns a thread of 1 MiB of state and 1,000 messages of about
// 200 bytes each, after a finished run, and the JSON text of its messages.
func bigThread(b *testing.B) (*thread, []json.RawMessage) {
	b.Helper()
	state := make(map[string]string, 1024)
	for i := range 1024 {
		state[fmt.Sprintf("k%04d", i)] = strings.Repeat("s", 1012)
	}
	messages := make([]json.RawMessage, 1000)
	for i := range messages {
		messages[i] = json.RawMessage(fmt.Sprintf(`{"id":"m%d","role":"user","content":%q}`, i, strings.Repeat("x", 160)))
	}
	text, err := json.Marshal(map[string]any{"threadId": "t", "runId": "r0", "state": state, "messages": messages})
	require.NoError(b, err)
	var in aguistate.RunAgentInput
	require.NoError(b, in.UnmarshalJSON(text))
	r := New(nil, nil)
	b.Cleanup(func() { _ = r.Close() })
	c := aguistate.New(r.o.Consumer)
	require.NoError(b, c.StartRun(in))
	require.NoError(b, c.Apply([]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r0"}`)))
	return &thread{r: r, id: "t", c: c}, messages
}

// BenchmarkCheckRecord measures checkRecord, which a POST runs under its
// thread's lock, on a thread of 1 MiB of state and 1,000 messages, for an
// input that adds one message: alone, or after the thread's messages (as
// a client that sends the whole thread does).
func BenchmarkCheckRecord(b *testing.B) {
	t, held := bigThread(b)
	added := json.RawMessage(`{"id":"new","role":"user","content":"hello"}`)
	cases := []struct {
		name     string
		messages []json.RawMessage
	}{
		{"one message", []json.RawMessage{added}},
		{"whole thread", append(held[:len(held):len(held)], added)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			text, err := json.Marshal(map[string]any{"threadId": "t", "runId": "r1", "messages": tc.messages})
			require.NoError(b, err)
			var in aguistate.RunAgentInput
			require.NoError(b, in.UnmarshalJSON(text))
			b.ReportAllocs()
			for b.Loop() {
				if err := t.r.checkRecord(t, in, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
