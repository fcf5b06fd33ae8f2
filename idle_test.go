// BenchmarkIdleThreads: the heap that many idle threads hold, each a
// Consumer that a run built and left, beside the reference client holding
// the same threads (benchmarks/reference/idle.mjs).

package aguistate

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
)

// idleThreadCount is how many threads BenchmarkIdleThreads holds.
const idleThreadCount = 10_000

// idleState returns thread i's state: about 10 KB of an agent's working
// document, a few settings and a list of tasks, each thread's text its own.
func idleState(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"thread":"thread-%05d","title":"Plan for customer %d","version":%d,"owner":"agent",`, i, i, i%7)
	fmt.Fprintf(&b, `"settings":{"model":"model-%d","temperature":0.%d,"tools":["search","fetch","write"],"limits":{"steps":%d,"tokens":%d}},"items":[`, i%3, i%10, 10+i%5, 4096+i)
	for j := 0; b.Len() < 10_000-160; j++ {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"t%d-%d","name":"Task %d of plan %d","done":%t,"tags":["a","b"],"weight":%d.5}`, i, j, j, i, (i+j)%3 == 0, j)
	}
	b.WriteString(`]}`)
	return b.String()
}

// idleMessage returns message k (of 20) of thread i, as JSON text: users
// ask, the assistant answers or calls a tool, and tools answer.
func idleMessage(i, k int) string {
	switch k % 4 {
	case 0:
		return fmt.Sprintf(`{"id":"m%d-%d","role":"user","content":"Question %d of thread %d: what is the weather in city number %d today?"}`, i, k, k, i, i%97)
	case 1:
		return fmt.Sprintf(`{"id":"m%d-%d","role":"assistant","content":"Let me look that up for you.","toolCalls":[{"id":"c%d-%d","type":"function","function":{"name":"weather","arguments":"{\"city\":%d}"}}]}`, i, k, i, k, i%97)
	case 2:
		return fmt.Sprintf(`{"id":"m%d-%d","role":"tool","toolCallId":"c%d-%d","content":"Sunny, %d degrees, light wind from the west."}`, i, k, i, k-1, 10+i%25)
	}
	return fmt.Sprintf(`{"id":"m%d-%d","role":"assistant","content":"It is sunny in city %d, about %d degrees. Anything else?"}`, i, k, i%97, 10+i%25)
}

// idleThread returns the events of thread i's run, one JSON text each:
// a state and 16 messages as snapshots, then 4 messages streamed (a text
// message, a tool call and its result, and a last text message), a state
// delta, and the end of the run. The thread then holds 10 KB of state and
// 20 messages.
func idleThread(i int) []string {
	ids := func(k int) string { return fmt.Sprintf("m%d-%d", i, k) }
	msgs := make([]string, 16)
	for k := range msgs {
		msgs[k] = idleMessage(i, k)
	}
	return []string{
		fmt.Sprintf(`{"type":"RUN_STARTED","threadId":"thread-%05d","runId":"run-%d"}`, i, i),
		`{"type":"STATE_SNAPSHOT","snapshot":` + idleState(i) + `}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":[` + strings.Join(msgs, ",") + `]}`,
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_START","messageId":"%s","role":"assistant"}`, ids(16)),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"%s","delta":"Let me check "}`, ids(16)),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"%s","delta":"the forecast for city %d "}`, ids(16), i%97),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"%s","delta":"once more."}`, ids(16)),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_END","messageId":"%s"}`, ids(16)),
		fmt.Sprintf(`{"type":"TOOL_CALL_START","toolCallId":"c%d-17","toolCallName":"forecast","parentMessageId":"%s"}`, i, ids(17)),
		fmt.Sprintf(`{"type":"TOOL_CALL_ARGS","toolCallId":"c%d-17","delta":"{\"city\":"}`, i),
		fmt.Sprintf(`{"type":"TOOL_CALL_ARGS","toolCallId":"c%d-17","delta":"%d,\"days\":3}"}`, i, i%97),
		fmt.Sprintf(`{"type":"TOOL_CALL_END","toolCallId":"c%d-17"}`, i),
		fmt.Sprintf(`{"type":"TOOL_CALL_RESULT","messageId":"%s","toolCallId":"c%d-17","content":"Sunny for three days, %d to %d degrees."}`, ids(18), i, 10+i%25, 15+i%25),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_START","messageId":"%s","role":"assistant"}`, ids(19)),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"%s","delta":"Sunny for the next three days, "}`, ids(19)),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"%s","delta":"between %d and %d degrees."}`, ids(19), 10+i%25, 15+i%25),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_END","messageId":"%s"}`, ids(19)),
		`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/items/3/done","value":true},{"op":"replace","path":"/version","value":8}]}`,
		fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":"thread-%05d","runId":"run-%d"}`, i, i),
	}
}

// idleText returns the size of the JSON text of what c holds: its state
// and its messages as one array, compact.
func idleText(c *Consumer) int {
	v := c.cur.Load()
	n := v.messages.Len()
	return v.state.Size() + 2 + v.messages.Size() + max(n-1, 0)
}

// TestIdleThread checks that a thread of BenchmarkIdleThreads applies
// whole: its run ends, it holds 20 messages, and the state took the delta.
func TestIdleThread(t *testing.T) {
	c := New(nil)
	for _, ev := range idleThread(42) {
		if err := c.Apply([]byte(ev)); err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
	}
	ms := c.Messages()
	if len(ms) != 20 {
		t.Fatalf("%d messages, want 20", len(ms))
	}
	if got := ms[19].Text(); got != "Sunny for the next three days, between 27 and 32 degrees." {
		t.Errorf("last message %q", got)
	}
	st := c.State().String()
	if !strings.Contains(st, `"version":8`) || len(st) < 9_500 || len(st) > 10_500 {
		t.Errorf("state of %d bytes: %.80s", len(st), st)
	}
	if idleText(c) < 12_000 {
		t.Errorf("thread text of %d bytes", idleText(c))
	}
}

// BenchmarkIdleThreads builds idleThreadCount threads, each a Consumer
// given one run's events (idleThread), keeps them, and reports the live
// heap they hold per thread after garbage collection (heap-B/thread), and
// that per byte of their JSON text (heap-B/text-B). The target (issue 18):
// at most what the reference client holds for the same threads.
//
// With AGUISTATE_IDLE_THREADS=FILE set, it also writes the threads' events
// to FILE, one thread a line as a JSON array, for
// benchmarks/reference/idle.mjs; and when that script's node_modules is
// installed, the sub-benchmark "reference" runs it on them with node and
// reports what the reference client holds, in the same run.
func BenchmarkIdleThreads(b *testing.B) {
	file := os.Getenv("AGUISTATE_IDLE_THREADS")
	if file != "" {
		writeIdleThreads(b, file)
	}
	b.Run("aguistate", func(b *testing.B) {
		var perThread, perByte float64
		for b.Loop() {
			perThread, perByte = holdIdleThreads(b)
		}
		b.ReportMetric(perThread, "heap-B/thread")
		b.ReportMetric(perByte, "heap-B/text-B")
	})
	b.Run("reference", func(b *testing.B) {
		script := filepath.Join("benchmarks", "reference", "idle.mjs")
		if file == "" {
			b.Skip("set AGUISTATE_IDLE_THREADS=FILE to measure the reference client")
		}
		if _, err := os.Stat(filepath.Join("benchmarks", "reference", "node_modules", "@ag-ui", "client")); err != nil {
			b.Skip("run npm install in benchmarks/reference to measure the reference client")
		}
		var perThread, perByte float64
		for b.Loop() {
			out, err := exec.Command("node", "--expose-gc", script, file).Output()
			if err != nil {
				b.Fatalf("%s: %v", script, err)
			}
			// The script's last line: heap-B/thread heap-B/text-B.
			f := strings.Fields(string(out))
			if len(f) < 2 {
				b.Fatalf("%s printed %q", script, out)
			}
			perThread, _ = strconv.ParseFloat(f[len(f)-2], 64)
			perByte, _ = strconv.ParseFloat(f[len(f)-1], 64)
		}
		b.ReportMetric(perThread, "heap-B/thread")
		b.ReportMetric(perByte, "heap-B/text-B")
	})
}

// holdIdleThreads builds the threads and returns the heap they hold per
// thread and per byte of their text.
func holdIdleThreads(b *testing.B) (perThread, perByte float64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	threads := make([]*Consumer, idleThreadCount)
	text := 0
	for i := range threads {
		c := New(nil)
		for _, ev := range idleThread(i) {
			if err := c.Apply([]byte(ev)); err != nil {
				b.Fatal(err)
			}
		}
		threads[i] = c
		text += idleText(c)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if file := os.Getenv("AGUISTATE_IDLE_PROFILE"); file != "" {
		writeHeapProfile(b, file)
	}
	runtime.KeepAlive(threads)
	held := float64(after.HeapAlloc - before.HeapAlloc)
	return held / idleThreadCount, held / float64(text)
}

// writeHeapProfile writes a heap profile to file.
func writeHeapProfile(b *testing.B, file string) {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

// writeIdleThreads writes the threads' events to file, a thread a line.
func writeIdleThreads(b *testing.B, file string) {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range idleThreadCount {
		w.WriteString("[" + strings.Join(idleThread(i), ",") + "]\n")
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
