// Benchmarks of a relay on a store: join latency and fan-out to many viewers.

package storetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/require"
)

// BenchRelay measures a relay on the stores that h opens:
//
//   - Join/thread=T/join=J: a viewer who joins a run in progress, on a
//     thread with a 1 MB state and 1,000 messages (T=1MB) or a small one
//     whose run holds 37,000 open steps (T=scopes, the scope limits),
//     without a Last-Event-ID (J=prelude) and with one (J=last-event-id:
//     the log's last event after it). Each join takes turns with a raw read
//     of the same store (see benchJoin). "ms-first" is the median time to
//     the join's first event, "ms-joined" to the event of the join position
//     (the prelude's last); "log-ms-first" and "log-ms-joined" the raw
//     read's, and "first/log" the median of the ratios of the join's first
//     event to the raw read's beside it. "join-B",
//     "join-allocs", "log-B" and "log-allocs" are the process's allocations
//     during each side (server and client).
//   - Fanout/viewers=N: a recorded stream (the longest of
//     ../shared/streams, 55 events) run through the relay while N viewers
//     follow it: "events/s" is the run's events recorded and delivered to
//     every viewer per second, "deliveries/s" that times N. The viewers
//     read in the same process, as little as they can (the bytes, to EOF).
//
// Run it on one core with -cpu 1.
func BenchRelay(b *testing.B, h Harness) {
	b.Run("Join", func(b *testing.B) { benchJoin(b, h) })
	events, input := recordedStream(b)
	for _, viewers := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("Fanout/viewers=%d", viewers), func(b *testing.B) { benchFanout(b, h, events, input, viewers) })
	}
}

// recordedStream returns the events and run input of the longest recorded
// stream of ../shared/streams, or skips b without it.
func recordedStream(b *testing.B) ([][]byte, []byte) {
	_, file, _, _ := runtime.Caller(0)
	base := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "streams", "dotnet-step05-state-management")
	f, err := os.Open(base + ".jsonl")
	if err != nil {
		b.Skipf("the recorded stream is not there (clone the repository next to shared/): %v", err)
	}
	defer f.Close()
	var events [][]byte
	for text, err := range aguistate.ReadEvents(f, nil) {
		require.NoError(b, err)
		events = append(events, bytes.Clone(text))
	}
	input, err := os.ReadFile(base + ".input.json")
	require.NoError(b, err)
	return events, input
}

// benchThreadInput returns a run input of thread with a state of about 1
// MB and 1,000 messages.
func benchThreadInput(thread string) []byte {
	state, messages := agenttest.LargeThread()
	return fmt.Appendf(nil, `{"threadId":%q,"runId":"run-1","tools":[],"context":[],"state":%s,"messages":%s}`, thread, state, messages)
}

// joinSteps is how many steps are open in the Join benchmarks' thread at
// the scope limits, and stepName the length of their names: 37,000 entries
// of 111 bytes, 98% of the default MaxScopeSize (4 MiB).
const (
	joinSteps = 37_000
	stepName  = 100
)

// joinThread is a thread that the Join benchmarks join: a run input, and
// the run's events, held before the last.
type joinThread struct {
	name   string
	input  []byte
	events [][]byte
}

// joinThreads returns the threads the Join benchmarks join: a 1 MB state
// with 1,000 messages, and a small thread whose run holds open steps at the
// scope limits.
func joinThreads() []joinThread {
	begin := []byte(`{"type":"RUN_STARTED","threadId":"t","runId":"run-1"}`)
	custom := []byte(`{"type":"CUSTOM","name":"progress","value":1}`)
	end := []byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"run-1"}`)
	steps := [][]byte{begin}
	for i := range joinSteps {
		name := fmt.Sprintf("step-%06d-", i)
		name += strings.Repeat("x", stepName-len(name))
		steps = append(steps, fmt.Appendf(nil, `{"type":"STEP_STARTED","stepName":%q}`, name))
	}
	steps = append(steps, custom, end)
	return []joinThread{
		{"1MB", benchThreadInput("t"), [][]byte{begin, custom, end}},
		{"scopes", []byte(`{"threadId":"t","runId":"run-1","tools":[],"context":[],"state":{},"messages":[]}`), steps},
	}
}

// benchJoin measures joining a large thread's run in progress, each join
// beside a raw read of the same store: the log's entries written as SSE
// (an id and a data field each, flushed after the first), nothing applied,
// as a relay that keeps no thread would serve them. A prelude join is set
// beside a read of the whole log, a Last-Event-ID join beside a read after
// the same position. The two take turns, so that the load of the machine
// weighs on both alike, and each goes over a connection that served a
// request before (see joinTimes.join).
func benchJoin(b *testing.B, h Harness) {
	for _, th := range joinThreads() {
		b.Run("thread="+th.name, func(b *testing.B) {
			s, _ := open(b, h)
			agent := agenttest.New(b, th.events)
			release := agent.Hold(len(th.events) - 1) // the run is in progress
			defer release()
			// No checkpoint, no trim: the raw read reads the whole log.
			r := startRelay(b, agent.URL, relay.Options{Store: s, LeaseTTL: 5 * time.Second, Retry: 10 * time.Millisecond,
				CheckpointEvery: 1 << 30, KeepEvents: 1 << 30})
			go func() {
				resp, err := http.Post(r.srv.URL+"/agent", "application/json", bytes.NewReader(th.input))
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			// RUN_STARTED, the input's STATE_SNAPSHOT when it has a state, and
			// the events before the last.
			last := int64(len(th.events) - 1)
			if !bytes.Contains(th.input, []byte(`"state":{}`)) {
				last++
			}
			waitEntry(b, s, "t", last)
			raw := httptest.NewServer(rawLog(s))
			defer raw.Close()
			for _, tt := range []struct{ name, lastID string }{{"prelude", ""}, {"last-event-id", strconv.FormatInt(last-1, 10)}} {
				b.Run("join="+tt.name, func(b *testing.B) {
					var sides [2]joinTimes
					urls := [2]string{r.srv.URL, raw.URL}
					for i := 0; b.Loop(); i++ {
						for k := range 2 {
							side := (i + k) % 2 // the two take turns to go first
							sides[side].join(b, urls[side], tt.lastID, last)
						}
					}
					ratios := make([]float64, len(sides[0].first))
					for i := range ratios {
						ratios[i] = float64(sides[0].first[i]) / float64(sides[1].first[i])
					}
					n := float64(b.N)
					b.ReportMetric(median(sides[0].first)*1000, "ms-first")
					b.ReportMetric(median(sides[0].joined)*1000, "ms-joined")
					b.ReportMetric(median(sides[1].first)*1000, "log-ms-first")
					b.ReportMetric(median(sides[1].joined)*1000, "log-ms-joined")
					b.ReportMetric(medianOf(ratios), "first/log")
					b.ReportMetric(float64(sides[0].bytes)/n, "join-B")
					b.ReportMetric(float64(sides[0].allocs)/n, "join-allocs")
					b.ReportMetric(float64(sides[1].bytes)/n, "log-B")
					b.ReportMetric(float64(sides[1].allocs)/n, "log-allocs")
				})
			}
		})
	}
}

// waitEntry waits until thread's log in s holds position pos, reading no
// more than the entry there.
func waitEntry(b *testing.B, s relay.Store, thread string, pos int64) {
	ctx := testContext(b)
	for {
		for _, err := range s.Read(ctx, thread, pos-1) {
			if err == nil {
				return
			}
			break
		}
		if ctx.Err() != nil {
			b.Fatalf("thread %q: the log does not reach position %d", thread, pos)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// joinTimes records what the joins of one side of benchJoin took: the
// time to the first event and to the join position's, join by join, and
// the bytes and allocations of the process meanwhile (the server's and the
// client's), summed.
type joinTimes struct {
	first, joined []time.Duration
	bytes, allocs uint64
}

// median returns the median of ds, in seconds.
func median(ds []time.Duration) float64 {
	fs := make([]float64, len(ds))
	for i, d := range ds {
		fs[i] = d.Seconds()
	}
	return medianOf(fs)
}

// medianOf returns the median of fs, which it sorts.
func medianOf(fs []float64) float64 {
	if len(fs) == 0 {
		return 0
	}
	slices.Sort(fs)
	return (fs[(len(fs)-1)/2] + fs[len(fs)/2]) / 2
}

// join joins thread "t" of the server at base with Last-Event-ID lastID
// (none when ""), reads up to the event of id pos, and adds what it took
// to j. It first gets base's /healthz, untimed, so that the join goes over
// a connection kept from a request before, as the raw read's does: a
// relay's event stream holds its connection, which the client closes
// after each join, where the raw read's ends and leaves its connection to
// the next one (a new connection took 0.1 to 0.2 ms more to reach the
// handler, and a new goroutine whose stack grows).
func (j *joinTimes) join(b *testing.B, base, lastID string, pos int64) {
	resp, err := http.Get(base + "/healthz")
	require.NoError(b, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	req, err := http.NewRequest(http.MethodGet, base+"/threads/t/events", nil)
	require.NoError(b, err)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err = http.DefaultClient.Do(req)
	require.NoError(b, err)
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	ev := readEvent(b, br)
	j.first = append(j.first, time.Since(start))
	for id := fmt.Appendf(nil, "id: %d\n", pos); !bytes.HasPrefix(ev, id); {
		ev = readEvent(b, br)
	}
	j.joined = append(j.joined, time.Since(start))
	runtime.ReadMemStats(&after)
	j.bytes += after.TotalAlloc - before.TotalAlloc
	j.allocs += after.Mallocs - before.Mallocs
}

// rawLog serves thread "t" of s as a relay that keeps no thread would: a
// GET of /threads/t/events reads the log after its Last-Event-ID (0
// without one) and writes its entries as SSE events, flushing after the
// first and at the end. Any other path gets 200 and no body.
func rawLog(s relay.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/threads/t/events" {
			return
		}
		after, _ := strconv.ParseInt(req.Header.Get("Last-Event-ID"), 10, 64)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		var buf []byte
		for e, err := range s.Read(req.Context(), "t", after) {
			if err != nil {
				return
			}
			buf = strconv.AppendInt(append(buf[:0], "id: "...), e.Pos, 10)
			buf = append(append(append(buf, "\ndata: "...), e.Event...), "\n\n"...)
			if _, err := w.Write(buf); err != nil {
				return
			}
			if e.Pos == after+1 {
				_ = rc.Flush()
			}
		}
	})
}

// readEvent reads one SSE event, its lines up to the blank line, but for
// the retry field.
func readEvent(b *testing.B, br *bufio.Reader) []byte {
	var event []byte
	for {
		line, err := br.ReadBytes('\n')
		require.NoError(b, err)
		switch {
		case len(line) == 1:
			if bytes.Contains(event, []byte("data:")) {
				return event
			}
			event = event[:0]
		case !bytes.HasPrefix(line, []byte("retry:")):
			event = append(event, line...)
		}
	}
}

// benchFanout runs events through a relay on the stores that h opens
// while viewers follow the run.
func benchFanout(b *testing.B, h Harness, events [][]byte, input []byte, viewers int) {
	s, ns := open(b, h)
	agent := agenttest.New(b, events)
	r := newRelayServer(b, agent.URL, h.Open(b, ns, ""), true)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: viewers + 1}}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		thread := fmt.Sprint("t", i)
		release := agent.Hold(1)
		posted := make(chan struct{})
		go func() {
			defer close(posted)
			resp, err := client.Post(r.srv.URL+"/agent", "application/json", bytes.NewReader(withThread(input, thread)))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		waitLog(b, s, thread, 1)
		var joined, done sync.WaitGroup
		for range viewers {
			joined.Add(1)
			done.Go(func() {
				resp, err := client.Get(r.srv.URL + "/threads/" + thread + "/events")
				if err != nil {
					joined.Done()
					return
				}
				defer resp.Body.Close()
				br := bufio.NewReader(resp.Body)
				for !bytes.HasPrefix(readEvent(b, br), []byte("id: ")) { // the prelude
				}
				joined.Done()
				_, _ = io.Copy(io.Discard, br)
			})
		}
		joined.Wait()
		b.StartTimer()
		release()
		done.Wait()
		<-posted
	}
	b.StopTimer()
	perSecond := float64(len(events)*b.N) / b.Elapsed().Seconds()
	b.ReportMetric(perSecond, "events/s")
	b.ReportMetric(perSecond*float64(viewers), "deliveries/s")
	b.ReportMetric(0, "ns/op")
}

// withThread returns a run input with threadId thread and a runId of its
// own.
func withThread(input []byte, thread string) []byte {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(input, &in); err != nil {
		panic(err)
	}
	in["threadId"], _ = json.Marshal(thread)
	in["runId"], _ = json.Marshal(thread + "-run")
	out, _ := json.Marshal(in)
	return out
}
