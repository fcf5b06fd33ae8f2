// Benchmarks of a relay on a store: join latency and fan-out to many viewers.

package storetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/stretchr/testify/require"
)

// BenchRelay measures a relay on the stores that h opens:
//
//   - Join/prelude and Join/replay: a viewer who joins a run in progress on
//     a thread with a 1 MB state and 1,000 messages, without a Last-Event-ID
//     (a prelude) and with one (the log's last event after it): "ms-first"
//     is the time to its first event, "ms-joined" to the prelude's last.
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

// benchJoin measures joining a large thread's run in progress.
func benchJoin(b *testing.B, h Harness) {
	s, _ := open(b, h)
	agent := agenttest.New(b, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"run-1"}`),
		[]byte(`{"type":"CUSTOM","name":"progress","value":1}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"run-1"}`),
	})
	release := agent.Hold(2) // the run is in progress
	defer release()
	r := newRelayServer(b, agent.URL, s, true)
	input := benchThreadInput("t")
	go func() {
		resp, err := http.Post(r.srv.URL+"/agent", "application/json", bytes.NewReader(input))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	waitLog(b, s, "t", 3) // RUN_STARTED, the input's STATE_SNAPSHOT, CUSTOM
	_, pos := threadAt(b, s, "t")
	url := r.srv.URL + "/threads/t/events"
	for _, tt := range []struct{ name, lastID string }{{"prelude", ""}, {"replay", strconv.FormatInt(pos-1, 10)}} {
		b.Run(tt.name, func(b *testing.B) {
			var first, joined time.Duration
			for b.Loop() {
				start := time.Now()
				req, err := http.NewRequest(http.MethodGet, url, nil)
				require.NoError(b, err)
				if tt.lastID != "" {
					req.Header.Set("Last-Event-ID", tt.lastID)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(b, err)
				br := bufio.NewReaderSize(resp.Body, 64<<10)
				readEvent(b, br)
				first += time.Since(start)
				if tt.lastID == "" {
					for !bytes.HasPrefix(readEvent(b, br), []byte("id: ")) { // the prelude's last event has an id
					}
				}
				joined += time.Since(start)
				resp.Body.Close()
			}
			b.ReportMetric(first.Seconds()*1000/float64(b.N), "ms-first")
			b.ReportMetric(joined.Seconds()*1000/float64(b.N), "ms-joined")
		})
	}
}

// readEvent reads one SSE event, its lines up to the blank line, but for
// the retry field.
func readEvent(b *testing.B, br *bufio.Reader) []byte {
	var event []byte
	for {
		line, err := br.ReadBytes('\n')
		require.NoError(b, err)
		if len(line) == 1 {
			if bytes.Contains(event, []byte("data:")) {
				return event
			}
			event = event[:0]
			continue
		}
		event = append(event, line...)
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
