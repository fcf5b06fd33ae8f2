// Consumer.Run against github.com/tmaxmax/go-sse framing, encoding/json
// and a mutable append, on the same stream of text tokens.

package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aguistate/aguistate"
	sse "github.com/tmaxmax/go-sse"
)

// tokenStream returns an SSE stream of one run that streams one assistant
// message in n TEXT_MESSAGE_CONTENT events of one token each (about 72
// bytes an event), and the message's text.
func tokenStream(n int) ([]byte, string) {
	words := []string{" the", " weather", " in", " Rome", " is", " sunny,", " with", " a", " high", " of", " 24", " degrees", "."}
	var b, text bytes.Buffer
	event := func(s string) { fmt.Fprintf(&b, "data: %s\n\n", s) }
	event(`{"type":"RUN_STARTED","threadId":"thread-1","runId":"run-1"}`)
	event(`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`)
	for i := range n {
		w := words[i%len(words)]
		text.WriteString(w)
		event(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"` + w + `"}`)
	}
	event(`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`)
	event(`{"type":"RUN_FINISHED","threadId":"thread-1","runId":"run-1"}`)
	return b.Bytes(), text.String()
}

// naive is what a Go client writes without a library: go-sse frames the
// stream, encoding/json decodes each event, and each message is a mutable
// buffer that deltas append to.
type naive struct {
	messages map[string]*strings.Builder
	order    []string
}

func (n *naive) run(r *bytes.Reader) error {
	n.messages = map[string]*strings.Builder{}
	for ev, err := range sse.Read(r, &sse.ReadConfig{MaxEventSize: 16 << 20}) {
		if err != nil {
			return err
		}
		var e struct {
			Type      string `json:"type"`
			MessageID string `json:"messageId"`
			Delta     string `json:"delta"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return err
		}
		switch e.Type {
		case "TEXT_MESSAGE_START":
			n.messages[e.MessageID] = &strings.Builder{}
			n.order = append(n.order, e.MessageID)
		case "TEXT_MESSAGE_CONTENT":
			m, ok := n.messages[e.MessageID]
			if !ok {
				return fmt.Errorf("no message %q", e.MessageID)
			}
			m.WriteString(e.Delta)
		}
	}
	return nil
}

// BenchmarkRun applies a 200,000-token stream (about 14 MB of SSE) with
// Consumer.Run and with the naive client, side by side. The target (issue
// 18): aguistate at least 1.2 times as fast, with fewer allocations. Read
// it with benchstat -col /consumer.
func BenchmarkRun(b *testing.B) {
	stream, text := tokenStream(200_000)
	b.Run("consumer=aguistate", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		reportCPU(b, func() {
			c := aguistate.New(nil)
			if err := c.Run(context.Background(), bytes.NewReader(stream)); err != nil {
				b.Fatal(err)
			}
			if got := c.Messages()[0].Text(); got != text {
				b.Fatalf("text is %d bytes, want %d", len(got), len(text))
			}
		})
	})
	b.Run("consumer=go-sse+encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		reportCPU(b, func() {
			var n naive
			if err := n.run(bytes.NewReader(stream)); err != nil {
				b.Fatal(err)
			}
			if got := n.messages["msg-1"].String(); got != text {
				b.Fatalf("text is %d bytes, want %d", len(got), len(text))
			}
		})
	})
}
