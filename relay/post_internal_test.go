// Benchmarks of a POST's check of the record of its run's input.

package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aguistate/aguistate"
	"github.com/stretchr/testify/require"
)

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
