// Benchmarks: a one-operation delta on states of 1 KB to 10 MB (against
// evanphx), the cost table of issue 10 on four state shapes, memory held per
// byte of parsed JSON text, text streamed in small pieces, and message
// events by the number of messages held. The worst legal events are in
// worst_test.go.

package aguistate

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// benchState returns a state of about size bytes shaped like an agent's
// working document: a few metadata members and a list of sections, each
// holding 32 small task items. Sections grow with the size, so a 10 MB
// state has about 3,000 of them.
func benchState(size int) string {
	var b strings.Builder
	b.WriteString(`{"meta":{"title":"Plan","version":3,"owner":"agent"},"sections":[`)
	for s := 0; b.Len() < size; s++ {
		if s > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"s%d","title":"Section %d","items":[`, s, s)
		for i := 0; i < 32; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"s%d-%d","name":"Task %d of section %d","done":false,"tags":["a","b"],"weight":%d.5}`, s, i, i, s, i)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

var benchSizes = []struct {
	name string
	size int
}{
	{"1KB", 1 << 10}, {"100KB", 100 << 10}, {"1MB", 1 << 20}, {"10MB", 10 << 20},
}

// BenchmarkApply measures one STATE_DELTA event with one operation, from
// its JSON text to the published state, on states of each size. The
// operation replaces one item's "done" in the middle section; its cost must
// not grow with the rest of the state.
func BenchmarkApply(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			state := benchState(sz.size)
			c := New(nil)
			if err := c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":` + state + `}`)); err != nil {
				b.Fatal(err)
			}
			mid := c.State().node().Get("sections").Len() / 2
			events := [2][]byte{}
			for i, v := range []string{"true", "false"} {
				events[i] = []byte(fmt.Sprintf(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/sections/%d/items/7/done","value":%s}]}`, mid, v))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if err := c.Apply(events[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApplyEvanphx measures the same patch with evanphx/json-patch,
// which re-reads and re-writes the whole document on each apply.
func BenchmarkApplyEvanphx(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			doc := []byte(benchState(sz.size))
			p, err := jsonpatch.DecodePatch([]byte(`[{"op":"replace","path":"/sections/0/items/7/done","value":true}]`))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Apply(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamText streams one assistant message of about 256 KB in
// 4-byte TEXT_MESSAGE_CONTENT events. Each event costs its own length, not
// the message's: ns/op is per event, and must not grow with the text.
func BenchmarkStreamText(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 16} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			event := []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"abcd"}`)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				c := New(nil)
				if err := c.Apply([]byte(`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`)); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for range n {
					if err := c.Apply(event); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}

// wideArrayState returns {"sections":[...]} of about size bytes: sections
// of about 240 bytes each, so that 10 MB holds about 43,000 of them.
func wideArrayState(size int) string {
	var b strings.Builder
	b.WriteString(`{"sections":[`)
	for s := 0; b.Len() < size; s++ {
		if s > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"sec-%d","title":"Section %d of the plan","score":%d,"done":false,"owner":"agent","tags":["x","y","z"],"notes":"Notes on section %d, kept short but not too short to be realistic."}`, s, s, s%100, s)
	}
	b.WriteString(`]}`)
	return b.String()
}

// wideObjectState returns an object of about size bytes whose members, of
// about 58 bytes each, are keyed by item: 10 MB holds about 180,000.
func wideObjectState(size int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"item-%06d":{"id":%d,"score":%d,"name":"Item %d"}`, i, i, i%100, i)
	}
	b.WriteByte('}')
	return b.String()
}

// listState returns an array of about size bytes of 100-byte elements: 10
// MB holds about 100,000.
func listState(size int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"kind":"event","label":"Element %06d of the list","value":%d.5,"flag":true,"refs":[1,2]}`, i, i, i%1000)
	}
	b.WriteByte(']')
	return b.String()
}

// zerosState returns [0,0,...] of about size bytes.
func zerosState(size int) string {
	n := max(size/2, 1)
	return "[" + strings.Repeat("0,", n-1) + "0]"
}

// costCase is one row of the cost table: a state shape, and the events
// that a benchmark applies in turn, each one operation. Rows whose edit
// cannot repeat (adding a member) alternate it with its inverse, so ns/op
// is the mean of the two.
type costCase struct {
	name   string
	state  func(size int) string
	events func(state *jsonv.Node) []string
}

var costCases = []costCase{
	{"sections-replace", benchState, func(st *jsonv.Node) []string {
		mid := st.Get("sections").Len() / 2
		return []string{
			fmt.Sprintf(`[{"op":"replace","path":"/sections/%d/items/7/done","value":true}]`, mid),
			fmt.Sprintf(`[{"op":"replace","path":"/sections/%d/items/7/done","value":false}]`, mid),
		}
	}},
	{"wide-array-replace-score", wideArrayState, func(st *jsonv.Node) []string {
		mid := st.Get("sections").Len() / 2
		return []string{
			fmt.Sprintf(`[{"op":"replace","path":"/sections/%d/score","value":7}]`, mid),
			fmt.Sprintf(`[{"op":"replace","path":"/sections/%d/score","value":8}]`, mid),
		}
	}},
	{"wide-object-add", wideObjectState, func(*jsonv.Node) []string {
		return []string{
			`[{"op":"add","path":"/new-member","value":{"id":1,"score":2,"name":"New"}}]`,
			`[{"op":"remove","path":"/new-member"}]`,
		}
	}},
	{"wide-object-remove", wideObjectState, func(st *jsonv.Node) []string {
		name := fmt.Sprintf("item-%06d", st.Len()/2)
		return []string{
			fmt.Sprintf(`[{"op":"remove","path":"/%s"}]`, name),
			fmt.Sprintf(`[{"op":"add","path":"/%s","value":{"id":1,"score":2,"name":"Back"}}]`, name),
		}
	}},
	{"deep-replace", deepState, func(*jsonv.Node) []string {
		return []string{
			`[{"op":"replace","path":"` + deepPath() + `","value":1}]`,
			`[{"op":"replace","path":"` + deepPath() + `","value":2}]`,
		}
	}},
	{"list-insert-0", listState, func(*jsonv.Node) []string {
		return []string{
			`[{"op":"add","path":"/0","value":{"id":-1,"kind":"new"}}]`,
			`[{"op":"remove","path":"/0"}]`,
		}
	}},
}

// deepLevels is how deep the deep-replace row edits.
const deepLevels = 64

// deepState returns an object of about size bytes: a list of sections
// (benchState's) beside a chain of deepLevels nested objects, each with a
// name and a count beside the next, whose last holds "v".
func deepState(size int) string {
	var b strings.Builder
	chain := deepChain()
	inner := benchState(max(size-len(chain)-32, 0))
	b.WriteString(`{"doc":` + inner + `,"deep":` + chain + `}`)
	return b.String()
}

// deepChain returns the chain of deepState, about 2.5 KB.
func deepChain() string {
	var b strings.Builder
	for i := range deepLevels {
		fmt.Fprintf(&b, `{"name":"level %d","count":%d,"c":`, i, 1000+i)
	}
	b.WriteString(`{"v":0}`)
	b.WriteString(strings.Repeat("}", deepLevels))
	return b.String()
}

// deepPath returns the pointer of "v" at the end of deepState's chain.
func deepPath() string {
	return "/deep" + strings.Repeat("/c", deepLevels-1) + "/c/v"
}

var costSizes = []struct {
	name string
	size int
}{
	{"1KB", 1 << 10}, {"1MB", 1 << 20}, {"10MB", 10 << 20},
}

// BenchmarkCost measures one STATE_DELTA event of one operation, from its
// JSON text to the published state, for every row of the cost table of
// issue 10 at 1 KB, 1 MB and 10 MB. The target: the 10 MB cost is at most
// 3 times the 1 KB cost on every row.
func BenchmarkCost(b *testing.B) {
	for _, cc := range costCases {
		for _, sz := range costSizes {
			b.Run(cc.name+"/"+sz.name, func(b *testing.B) {
				c := New(nil)
				if err := c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":` + cc.state(sz.size) + `}`)); err != nil {
					b.Fatal(err)
				}
				var events [][]byte
				for _, d := range cc.events(c.State().node()) {
					events = append(events, []byte(`{"type":"STATE_DELTA","delta":`+d+`}`))
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					if err := c.Apply(events[i%len(events)]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkCostFloor is the floor of BenchmarkCost: what a hand-written
// consumer does with the same STATE_DELTA events on the same states,
// decoded by encoding/json into map[string]any and []any: decode the
// event into a struct, split the pointer, and edit the tree in place (no
// copy, no view published, no limit checked).
func BenchmarkCostFloor(b *testing.B) {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	type event struct {
		Type  string `json:"type"`
		Delta []op   `json:"delta"`
	}
	for _, cc := range costCases {
		for _, sz := range costSizes {
			b.Run(cc.name+"/"+sz.name, func(b *testing.B) {
				text := cc.state(sz.size)
				var doc any
				if err := json.Unmarshal([]byte(text), &doc); err != nil {
					b.Fatal(err)
				}
				st, err := jsonv.Parse([]byte(text), 0)
				if err != nil {
					b.Fatal(err)
				}
				var events [][]byte
				for _, d := range cc.events(st) {
					events = append(events, []byte(`{"type":"STATE_DELTA","delta":`+d+`}`))
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					var ev event
					if err := json.Unmarshal(events[i%len(events)], &ev); err != nil {
						b.Fatal(err)
					}
					for _, o := range ev.Delta {
						doc = floorApply(doc, o.Op, strings.Split(o.Path, "/")[1:], o.Value)
					}
				}
			})
		}
	}
}

// floorApply applies one add, remove or replace to doc in place, as a
// hand-written consumer would; it panics where the path names nothing.
func floorApply(doc any, op string, tokens []string, v any) any {
	parent := doc
	for _, t := range tokens[:len(tokens)-1] {
		switch c := parent.(type) {
		case map[string]any:
			parent = c[t]
		case []any:
			i, _ := strconv.Atoi(t)
			parent = c[i]
		}
	}
	last := tokens[len(tokens)-1]
	switch c := parent.(type) {
	case map[string]any:
		if op == "remove" {
			delete(c, last)
		} else {
			c[last] = v
		}
	case []any:
		i, _ := strconv.Atoi(last)
		switch op {
		case "replace":
			c[i] = v
		case "add":
			c = append(c[:i], append([]any{v}, c[i:]...)...)
		default:
			c = append(c[:i], c[i+1:]...)
		}
		if len(tokens) == 1 {
			return c
		}
		floorApply(doc, "replace", tokens[:len(tokens)-1], c)
	}
	return doc
}

// parseShapes are the state shapes whose parsed memory is measured, at
// about 10 MB of text each.
var parseShapes = []struct {
	name string
	text func(size int) string
}{
	{"zeros", zerosState},
	{"sections", benchState},
	{"wide-object", wideObjectState},
	{"wide-array", wideArrayState},
	{"list", listState},
}

// heldPerByte returns the live heap that the value made by parse holds, per
// byte of text, measured after garbage collection.
func heldPerByte(text []byte, parse func([]byte) any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := parse(text)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(len(text))
}

// BenchmarkParse parses each shape with jsonv.Parse and reports the memory
// the result holds per byte of text; BenchmarkParseStdlib does the same
// with encoding/json into any, the target to meet. Both targets: at most
// what encoding/json costs, in time and memory, and at most 6 bytes held
// per byte of text.
func BenchmarkParse(b *testing.B) {
	benchParse(b, func(t []byte) (any, error) { return jsonv.Parse(t, 0) })
}

func BenchmarkParseStdlib(b *testing.B) {
	benchParse(b, func(t []byte) (any, error) {
		var v any
		err := json.Unmarshal(t, &v)
		return v, err
	})
}

// benchParse runs parse on 10 MB of each shape.
func benchParse(b *testing.B, parse func([]byte) (any, error)) {
	for _, sh := range parseShapes {
		b.Run(sh.name, func(b *testing.B) {
			text := []byte(sh.text(10 << 20))
			must := func(t []byte) any {
				v, err := parse(t)
				if err != nil {
					b.Fatal(err)
				}
				return v
			}
			held := heldPerByte(text, must)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				must(text)
			}
			b.ReportMetric(held, "held-B/text-B")
		})
	}
}

// BenchmarkSnapshot16MiB applies a STATE_SNAPSHOT of [0,0,...] as large as
// the default MaxEventSize allows (16 MiB): the target is well under a
// second.
func BenchmarkSnapshot16MiB(b *testing.B) {
	const wrap = `{"type":"STATE_SNAPSHOT","snapshot":}`
	event := []byte(`{"type":"STATE_SNAPSHOT","snapshot":` + zerosState(16<<20-len(wrap)) + `}`)
	b.SetBytes(int64(len(event)))
	b.ReportAllocs()
	for b.Loop() {
		c := New(nil)
		if err := c.Apply(event); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSplitPairs streams TEXT_MESSAGE_CONTENT events into a 7 MiB
// message, each ending with the high half of a UTF-16 pair whose low half
// starts the next (issue 10: 12.8 KB of such events held 1.39 GiB). Each
// event must cost its piece, not the message: ns/op and B/op are per event,
// and held-MiB is the live heap after them, the 7 MiB message included.
func BenchmarkSplitPairs(b *testing.B) {
	c := New(&Options{MaxMessageSize: 1 << 30})
	events := []string{`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`}
	chunk := `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"` + strings.Repeat("y", 1<<20) + `"}`
	for range 7 {
		events = append(events, chunk)
	}
	events = append(events, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\ud83d"}`)
	for _, ev := range events {
		if err := c.Apply([]byte(ev)); err != nil {
			b.Fatal(err)
		}
	}
	split := []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\ude00x\ud83d"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Apply(split); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(c)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "held-MiB")
}

// heldMessages returns n messages as JSON array elements, in threes: a user
// message, an assistant message with one tool call, and that call's result.
// version changes the text of the last one.
func heldMessages(n int, version string) []string {
	out := make([]string, n)
	for i := range out {
		switch i % 3 {
		case 0:
			out[i] = fmt.Sprintf(`{"id":"m-%d","role":"user","content":"Question %d: what is the weather in city number %d?"}`, i, i, i)
		case 1:
			out[i] = fmt.Sprintf(`{"id":"m-%d","role":"assistant","content":"Let me look.","toolCalls":[{"id":"call-%d","type":"function","function":{"name":"weather","arguments":"{\"city\":%d}"}}]}`, i, i, i)
		default:
			out[i] = fmt.Sprintf(`{"id":"m-%d","role":"tool","toolCallId":"call-%d","content":"Sunny, %d degrees."}`, i, i-1, i%40)
		}
	}
	if n > 0 {
		out[n-1] = fmt.Sprintf(`{"id":"m-%d","role":"user","content":"The last message, version %s."}`, n-1, version)
	}
	return out
}

// messageSizes are the numbers of messages held in BenchmarkMessageEvents.
var messageSizes = []int{100, 1_000, 10_000, 100_000}

// messageOptions lets a thread hold the largest benchmark list.
var messageOptions = &Options{MaxMessages: 1 << 20, MaxEventSize: 1 << 30}

// heldThread returns a Consumer holding n messages (heldMessages) after
// the setup events.
func heldThread(b *testing.B, n int, setup ...string) *Consumer {
	b.Helper()
	c := New(messageOptions)
	snap := `{"type":"MESSAGES_SNAPSHOT","messages":[` + strings.Join(heldMessages(n, "a"), ",") + `]}`
	for _, ev := range append([]string{snap}, setup...) {
		if err := c.Apply([]byte(ev)); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// fork returns a Consumer that holds what c holds, sharing it.
func fork(c *Consumer) *Consumer {
	f := New(&c.opts)
	f.cur.Store(c.cur.Load())
	return f
}

// BenchmarkMessageEvents measures one message event, from its JSON text to
// the published view, with 100 to 100,000 messages held. The target: an
// event with 100,000 messages held costs at most 3 times what it costs
// with 100. A MESSAGES_SNAPSHOT restates the whole list, changing its last
// message; "messages-snapshot-parse" parses the same text, and the target
// is at most twice that.
func BenchmarkMessageEvents(b *testing.B) {
	for _, n := range messageSizes {
		name := fmt.Sprintf("/messages=%d", n)
		b.Run("text-content"+name, func(b *testing.B) {
			c := heldThread(b, n, `{"type":"TEXT_MESSAGE_START","messageId":"live","role":"assistant"}`)
			event := []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"live","delta":"x"}`)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := c.Apply(event); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("tool-call-args"+name, func(b *testing.B) {
			c := heldThread(b, n, `{"type":"TOOL_CALL_START","toolCallId":"live-call","toolCallName":"search","parentMessageId":"live"}`)
			event := []byte(`{"type":"TOOL_CALL_ARGS","toolCallId":"live-call","delta":"x"}`)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := c.Apply(event); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("tool-result"+name, func(b *testing.B) {
			// An assistant message with 100 parallel calls; each round of
			// 100 events answers them in turn on a fork of the thread, so
			// that the list stays near n messages.
			const calls = 100
			setup := make([]string, 0, calls+1)
			for j := range calls {
				setup = append(setup, fmt.Sprintf(`{"type":"TOOL_CALL_START","toolCallId":"live-%d","toolCallName":"search","parentMessageId":"live"}`, j))
			}
			base := heldThread(b, n, setup...)
			events := make([][]byte, calls)
			for j := range events {
				events[j] = []byte(fmt.Sprintf(`{"type":"TOOL_CALL_RESULT","messageId":"result-%d","toolCallId":"live-%d","content":"done"}`, j, j))
			}
			b.ReportAllocs()
			b.ResetTimer()
			var c *Consumer
			for i := 0; b.Loop(); i++ {
				if i%calls == 0 {
					b.StopTimer()
					c = fork(base)
					b.StartTimer()
				}
				if err := c.Apply(events[i%calls]); err != nil {
					b.Fatal(err)
				}
			}
		})
		snaps := [2][]byte{}
		for i, version := range []string{"b", "a"} {
			snaps[i] = []byte(`{"type":"MESSAGES_SNAPSHOT","messages":[` + strings.Join(heldMessages(n, version), ",") + `]}`)
		}
		b.Run("messages-snapshot"+name, func(b *testing.B) {
			c := heldThread(b, n)
			b.SetBytes(int64(len(snaps[0])))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if err := c.Apply(snaps[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("messages-snapshot-parse"+name, func(b *testing.B) {
			b.SetBytes(int64(len(snaps[0])))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := jsonv.Parse(snaps[i&1], 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
