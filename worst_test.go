// The corpus of the worst legal events: for each event type, the event
// that costs the most that we found under the default limits, generated
// here, with the thread it applies to. BenchmarkWorstEvent measures each;
// the table of worst events in docs/economy.md comes from it.

package aguistate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The default limits the corpus fills.
const (
	worstEvent   = 16 << 20 // MaxEventSize
	worstMessage = 8 << 20  // MaxMessageSize
	worstCount   = 10_000   // MaxMessages
	worstTotal   = 64 << 20 // MaxTotalMessageSize
	worstScope   = 4 << 20  // MaxScopeSize
)

// shortName returns the i-th of the strings of letters and digits, shortest
// first: "0", ..., "z", "00", "01", ...
func shortName(i int) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	n := 1
	for span := len(digits); i >= span; span *= len(digits) {
		i -= span
		n++
	}
	b := make([]byte, n)
	for k := n - 1; k >= 0; k-- {
		b[k] = digits[i%len(digits)]
		i /= len(digits)
	}
	return string(b)
}

// upTo returns events made by item(i) for i = 0, 1, ..., as many as keep
// the sum of cost(i) at most size.
func upTo(size int, cost func(i int) int, item func(i int) string) []string {
	var out []string
	for i, total := 0, 0; ; i++ {
		if total += cost(i); total > size {
			return out
		}
		out = append(out, item(i))
	}
}

// worstCase is one event of the corpus: the events that make its thread,
// and the event itself. An event whose work runs out of its budget is
// refused (ErrLimit), and measured all the same.
type worstCase struct {
	name   string
	reason string
	build  func() (setup []string, event string)
}

// fill returns items made by item(i) for i = 0, 1, ..., joined with sep,
// as many as keep the result at most size bytes.
func fill(size int, sep string, item func(i int) string) string {
	var b strings.Builder
	for i := 0; ; i++ {
		s := item(i)
		if i > 0 {
			s = sep + s
		}
		if b.Len()+len(s) > size {
			return b.String()
		}
		b.WriteString(s)
	}
}

// sized returns the event head + body + tail, with body made by fill so
// that the event is at most size bytes.
func sized(size int, head, sep, tail string, item func(i int) string) string {
	return head + fill(size-len(head)-len(tail), sep, item) + tail
}

// repeatOps returns a patch of the operations ops, repeated in turn until
// the patch is about size bytes long or has 10,000 operations.
func repeatOps(size int, ops ...string) string {
	var out []string
	n := 0
	for n < size && len(out) < 10_000 {
		op := ops[len(out)%len(ops)]
		out = append(out, op)
		n += len(op) + 1
	}
	return "[" + strings.Join(out, ",") + "]"
}

// messagesOf returns a MESSAGES_SNAPSHOT of the messages made by item(i),
// at most worstCount of them and worstEvent bytes.
func messagesOf(item func(i int) string) string {
	const head, tail = `{"type":"MESSAGES_SNAPSHOT","messages":[`, `]}`
	n := 0
	return sized(worstEvent, head, ",", tail, func(i int) string {
		if n++; n > worstCount {
			return strings.Repeat("x", worstEvent) // stops fill
		}
		return item(i)
	})
}

// text returns a string of n bytes of words.
func text(n int) string { return strings.Repeat("lorem ipsum ", n/12+1)[:n] }

var worstCases = []worstCase{
	{"state-snapshot/zeros", "the 16 MiB array of zeros of issue 10: two bytes an element", func() ([]string, string) {
		return nil, sized(worstEvent, `{"type":"STATE_SNAPSHOT","snapshot":[`, ",", `]}`, func(int) string { return "0" })
	}},
	{"state-snapshot/small-arrays", "an array of one-element arrays: a container every four bytes", func() ([]string, string) {
		return nil, sized(worstEvent, `{"type":"STATE_SNAPSHOT","snapshot":[`, ",", `]}`, func(int) string { return "[0]" })
	}},
	{"state-snapshot/wide-object", "an object of 1.6 million members: a name to hash every 10 bytes", func() ([]string, string) {
		return nil, sized(worstEvent, `{"type":"STATE_SNAPSHOT","snapshot":{`, ",", `}}`, func(i int) string { return fmt.Sprintf(`"%x":0`, i) })
	}},
	{"state-delta/copy-remove-long-names", "the 330 KB delta of issue 10: copy and remove alternate beside 15 names of 1 MiB", func() ([]string, string) {
		var b strings.Builder
		b.WriteByte('{')
		for i := range 15 {
			fmt.Fprintf(&b, `"%s%02d":%d,`, strings.Repeat("n", 1<<20-2), i, i)
		}
		b.WriteString(`"a":{"x":1}}`)
		return []string{`{"type":"STATE_SNAPSHOT","snapshot":` + b.String() + `}`},
			`{"type":"STATE_DELTA","delta":` + repeatOps(330<<10, `{"op":"copy","from":"/a","path":"/b"}`, `{"op":"remove","path":"/b"}`) + `}`
	}},
	{"state-delta/copy-edit-deep", "copies alternate with edits at the bottom of 998 nested objects of 60 members, until the work budget runs out", func() ([]string, string) {
		level := make([]string, 60)
		for i := range level {
			level[i] = fmt.Sprintf(`"m%d":%d`, i, i)
		}
		members := strings.Join(level, ",")
		state := strings.Repeat(`{`+members+`,"k":`, 998) + `0` + strings.Repeat(`}`, 998)
		replace := `{"op":"replace","path":"` + strings.Repeat("/k", 998) + `","value":1}`
		return []string{`{"type":"STATE_SNAPSHOT","snapshot":` + state + `}`},
			`{"type":"STATE_DELTA","delta":` + repeatOps(worstEvent-1<<10, `{"op":"copy","from":"/m0","path":"/m1"}`, replace) + `}`
	}},
	{"state-delta/copy-insert-wide", "10,000 copies and inserts at the front of an array of a million", func() ([]string, string) {
		ops := make([]string, 0, 10_000)
		for len(ops) < 10_000 {
			ops = append(ops, `{"op":"copy","from":"/a/5","path":"/b"}`, `{"op":"add","path":"/a/0","value":1}`)
		}
		return []string{`{"type":"STATE_SNAPSHOT","snapshot":{"a":[` + strings.Repeat("0,", 1_000_000-1) + `0]}}`},
			`{"type":"STATE_DELTA","delta":[` + strings.Join(ops, ",") + `]}`
	}},
	{"state-delta/test-reversed-object", "a test of an object of 500,000 members given in reverse order: each is looked up by name", func() ([]string, string) {
		members := make([]string, 500_000)
		for i := range members {
			members[i] = fmt.Sprintf(`"k%d":%d`, i, i)
		}
		state := "{" + strings.Join(members, ",") + "}"
		slices.Reverse(members)
		return []string{`{"type":"STATE_SNAPSHOT","snapshot":` + state + `}`},
			`{"type":"STATE_DELTA","delta":[{"op":"test","path":"","value":{` + strings.Join(members, ",") + `}}]}`
	}},
	{"messages-snapshot/text", "10,000 messages of 1.6 KB", func() ([]string, string) {
		return nil, messagesOf(func(i int) string {
			return fmt.Sprintf(`{"id":"m%d","role":"user","content":"%s"}`, i, text(1600))
		})
	}},
	{"messages-snapshot/tool-calls", "10,000 assistant messages holding 230,000 tool calls, each indexed by id", func() ([]string, string) {
		return nil, messagesOf(func(i int) string {
			calls := fill(1600, ",", func(j int) string { return fmt.Sprintf(`{"id":"c%d-%d"}`, i, j) })
			return fmt.Sprintf(`{"id":"m%d","role":"assistant","toolCalls":[%s]}`, i, calls)
		})
	}},
	{"messages-snapshot/one-call-id", "10,000 assistant messages holding tool calls of the same id, in list order", func() ([]string, string) {
		return nil, messagesOf(func(i int) string {
			return fmt.Sprintf(`{"id":"m%d","role":"assistant","toolCalls":[{"id":"c"}],"content":"%s"}`, i, text(1550))
		})
	}},
	{"messages-snapshot/replace-all", "10,000 held messages dropped, 10,000 new ones appended", func() ([]string, string) {
		held := messagesOf(func(i int) string { return fmt.Sprintf(`{"id":"h%d","role":"user","content":"%s"}`, i, text(1600)) })
		return []string{held}, messagesOf(func(i int) string {
			return fmt.Sprintf(`{"id":"m%d","role":"user","content":"%s"}`, i, text(1600))
		})
	}},
	{"run-started/unnamed-messages", "an input of 2,500 messages without an id, matched by JSON text against 10,000 held (64 MiB)", func() ([]string, string) {
		input := func(k int) string {
			n := 0
			return sized(worstEvent, `{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"messages":[`, ",", `]}}`, func(i int) string {
				if n++; n > worstCount/4 {
					return strings.Repeat("x", worstEvent)
				}
				return fmt.Sprintf(`{"role":"user","content":"%d-%d %s"}`, k, i, text(6600))
			})
		}
		return []string{input(0), input(1), input(2), input(3)}, input(3)
	}},
	{"run-finished/interrupts", "1.1 million pending interrupts", func() ([]string, string) {
		return []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`},
			sized(worstEvent, `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[`, ",", `]}}`,
				func(i int) string { return fmt.Sprintf(`{"id":"%x"}`, i) })
	}},
	{"text-message-content/escapes", "a delta of 1.4 million escapes, 2.8 MB of text", func() ([]string, string) {
		return []string{`{"type":"TEXT_MESSAGE_START","messageId":"m"}`},
			sized(worstEvent, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"`, "", `"}`, func(int) string { return `\u00e9\n` })[:0] +
				sized(worstMessage*2, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"`, "", `"}`, func(int) string { return `\u00e9` })
	}},
	{"text-message-content/8MiB", "a delta as large as a message", func() ([]string, string) {
		return []string{`{"type":"TEXT_MESSAGE_START","messageId":"m"}`},
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"` + text(worstMessage-100) + `"}`
	}},
	{"text-message-end/metadata", "metadata of 800,000 members merged into the message's 800,000", func() ([]string, string) {
		meta := sized(worstMessage-200, `{`, ",", `}`, func(i int) string { return fmt.Sprintf(`"%x":1`, i) })
		return []string{`{"type":"TEXT_MESSAGE_START","messageId":"m","metadata":` + meta + `}`},
			`{"type":"TEXT_MESSAGE_END","messageId":"m","metadata":` + strings.ReplaceAll(meta, ":1", ":2") + `}`
	}},
	{"tool-call-args/100k-calls", "arguments of a call in a message of 100,000 calls", func() ([]string, string) {
		calls := fill(worstMessage-1<<20, ",", func(j int) string {
			return fmt.Sprintf(`{"id":"c%d","type":"function","function":{"name":"f","arguments":"{}"}}`, j)
		})
		return []string{`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a","role":"assistant","toolCalls":[` + calls + `]}]}`,
				`{"type":"TOOL_CALL_START","toolCallId":"live","toolCallName":"f","parentMessageId":"a"}`},
			`{"type":"TOOL_CALL_ARGS","toolCallId":"live","delta":"` + text(1<<20-200) + `"}`
	}},
	{"tool-call-result/parts", "content of 600,000 parts", func() ([]string, string) {
		return []string{`{"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f"}`},
			sized(worstMessage, `{"type":"TOOL_CALL_RESULT","messageId":"r","toolCallId":"c","content":[`, ",", `]}`,
				func(int) string { return `{"type":"text"}` })
	}},
	{"activity-snapshot/wide-content", "content of 800,000 members", func() ([]string, string) {
		return nil, sized(worstMessage-100, `{"type":"ACTIVITY_SNAPSHOT","messageId":"x","activityType":"T","content":{`, ",", `}}`,
			func(i int) string { return fmt.Sprintf(`"%x":0`, i) })
	}},
	{"activity-delta/test-reversed-content", "a test of 250,000 members in reverse order on content of 250,000", func() ([]string, string) {
		members := make([]string, 250_000)
		for i := range members {
			members[i] = fmt.Sprintf(`"k%d":%d`, i, i)
		}
		content := "{" + strings.Join(members, ",") + "}"
		slices.Reverse(members)
		return []string{`{"type":"ACTIVITY_SNAPSHOT","messageId":"x","activityType":"T","content":` + content + `}`},
			`{"type":"ACTIVITY_DELTA","messageId":"x","activityType":"T","patch":[{"op":"test","path":"","value":{` + strings.Join(members, ",") + `}}]}`
	}},
	{"reasoning-encrypted-value/8MiB", "an encrypted value as large as a message", func() ([]string, string) {
		return []string{`{"type":"TEXT_MESSAGE_START","messageId":"m"}`},
			`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"m","encryptedValue":"` + text(worstMessage-100) + `"}`
	}},
	{"text-message-chunk/64-lanes", "a chunk that opens a lane beside 63 others", func() ([]string, string) {
		var setup []string
		for i := range 63 {
			setup = append(setup, fmt.Sprintf(`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m%d","subagentRunId":"lane-%d","delta":"x"}`, i, i))
		}
		return setup, `{"type":"TEXT_MESSAGE_CHUNK","messageId":"new","subagentRunId":"lane-new","delta":"x"}`
	}},
	{"step-started/most-open-steps", "a step opens beside the 296,000 open steps MaxScopeSize allows, names of 1 to 4 bytes", func() ([]string, string) {
		// {"name":"NAME"} is 11 bytes and the name; the last is the event's.
		steps := upTo(worstScope, func(i int) int { return 11 + len(shortName(i)) }, func(i int) string {
			return fmt.Sprintf(`{"type":"STEP_STARTED","stepName":"%s"}`, shortName(i))
		})
		return steps[:len(steps)-1], steps[len(steps)-1]
	}},
	{"tool-call-start/most-open-calls", "a tool call opens beside the 962,000 open calls MaxTotalMessageSize allows, in 9 messages", func() ([]string, string) {
		// Each call is {"id":"ID","type":"function","function":{"name":"","arguments":""}}
		// and a comma; each message (9 of at most 8 MiB) about 40 bytes more.
		calls := upTo(worstTotal-9*100, func(i int) int { return 66 + len(shortName(i)) }, func(i int) string {
			return fmt.Sprintf(`{"type":"TOOL_CALL_START","toolCallId":"%s","toolCallName":"","parentMessageId":"m%d"}`, shortName(i), i%9)
		})
		return calls[:len(calls)-1], calls[len(calls)-1]
	}},
	{"subagent-started/4MiB", "a SUBAGENT_STARTED as large as MaxScopeSize: 400,000 members parsed and kept", func() ([]string, string) {
		// The subagent is held as {"event":EVENT,"done":false}.
		return []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`},
			sized(worstScope-len(`{"event":,"done":false}`), `{"type":"SUBAGENT_STARTED","subagentRunId":"s","name":"n","rawEvent":{`, ",", `}}`,
				func(i int) string { return fmt.Sprintf(`"%x":0`, i) })
	}},
	{"custom/wide-value", "an event passed on: 1.6 million members parsed and kept", func() ([]string, string) {
		return nil, sized(worstEvent, `{"type":"CUSTOM","name":"n","value":{`, ",", `}}`, func(i int) string { return fmt.Sprintf(`"%x":0`, i) })
	}},
}

// BenchmarkWorstEvent applies each event of the corpus to a fork of its
// thread: ns/op and B/op are one event's CPU time and allocations, and
// held-MiB is what the event adds to what the thread holds, in MiB.
func BenchmarkWorstEvent(b *testing.B) {
	for _, wc := range worstCases {
		b.Run(wc.name, func(b *testing.B) {
			setup, event := wc.build()
			if len(event) > worstEvent {
				b.Fatalf("the event is %d bytes, more than MaxEventSize", len(event))
			}
			base := New(nil)
			for i, ev := range setup {
				if err := base.Apply([]byte(ev)); err != nil {
					b.Fatalf("setup event %d: %v", i, err)
				}
			}
			apply := func(c *Consumer) {
				if err := c.Apply([]byte(event)); err != nil && !errors.Is(err, ErrLimit) {
					b.Fatal(err)
				}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c := fork(base)
			apply(c)
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(c)
			runtime.KeepAlive(base)
			b.SetBytes(int64(len(event)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				c = fork(base)
				b.StartTimer()
				apply(c)
			}
			b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/(1<<20), "held-MiB")
		})
	}
}

// BenchmarkWorstGap reads a stream whose events are each preceded by the
// most filler MaxGapSize allows (blank lines): ns/op is per event.
func BenchmarkWorstGap(b *testing.B) {
	const events = 100
	var stream bytes.Buffer
	for range events {
		stream.WriteString(strings.Repeat("\n", 64<<10-16))
		stream.WriteString("data: {\"type\":\"STEP_STARTED\",\"stepName\":\"s\"}\n\n")
	}
	b.SetBytes(int64(stream.Len() / events))
	b.ReportAllocs()
	for b.Loop() {
		if err := New(nil).Run(context.Background(), bytes.NewReader(stream.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}
