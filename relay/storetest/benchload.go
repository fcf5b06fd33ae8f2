// A relay on a store under load: many short runs, many long runs at once (issue 15).

package storetest

import (
	"bytes"
	"context"
	"fmt"
	"github.com/aguistate/aguistate"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
)

// loadBound is the longest one scenario of [BenchLoad] runs: a run that
// has not ended by then fails.
const loadBound = 2 * time.Minute

// BenchLoad measures one relay (default options) on a store that h opens,
// driven over HTTP as AG-UI clients drive it: each run is a POST /agent on
// a thread of its own, read to the end of its stream. The store's client
// is as h makes it: for Redis a go-redis client with its default pool (10
// connections per GOMAXPROCS), for PostgreSQL a pgxpool of its default
// size.
//
//   - Short: 1,000 runs of 9 events each (the agent answers at once), 20
//     at a time. "runs/s".
//   - Long/runs=N: N runs at once (100, then 300), each streaming 25
//     events over 5 s. "s" is the time from the first POST to the end of
//     the last stream (5 s at best).
//
// Each also reports "failed", the runs whose stream did not answer 200 and
// reach RUN_FINISHED; "lost", the threads whose end-of-run checkpoint the
// store does not hold 10 s after their run (the checkpoint is at the log's
// last position); and "warnings", the relay's log records at level Warn.
//
// One op is one whole scenario, bounded in runs and in time (loadBound):
// run it with -benchtime 1x, and without -cpu, which would size the pool.
func BenchLoad(b *testing.B, h Harness) {
	b.Run("Short/runs=1000/concurrent=20", func(b *testing.B) { benchLoad(b, h, 1000, 20, 2, 0) })
	for _, n := range []int{100, 300} {
		b.Run(fmt.Sprintf("Long/runs=%d/seconds=5", n), func(b *testing.B) { benchLoad(b, h, n, n, 10, 5*time.Second) })
	}
}

// benchLoad runs runs runs through a relay, concurrent at a time, each
// streaming the events of script(pieces) over length, and reports the
// metrics BenchLoad describes.
func benchLoad(b *testing.B, h Harness, runs, concurrent, pieces int, length time.Duration) {
	s, _ := open(b, h)
	agent := agenttest.NewScript(b, script(pieces))
	if n := len(script(pieces)(nil)); length > 0 {
		agent.Pace(length / time.Duration(n-1))
	}
	warnings := &warnCount{}
	r := relay.New(&aguistate.Agent{URL: agent.URL}, &relay.Options{Store: s, Logger: slog.New(warnings)})
	srv := httptest.NewServer(r)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrent}}
	b.Cleanup(func() {
		client.CloseIdleConnections()
		srv.CloseClientConnections()
		_ = r.Close()
		srv.Close()
	})

	var failed, lost int
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		threads := make([]string, runs)
		for j := range threads {
			threads[j] = fmt.Sprintf("load-%d-%d", i, j)
		}
		ctx, cancel := context.WithTimeout(context.Background(), loadBound)
		next := make(chan string)
		var fails atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range concurrent {
			wg.Go(func() {
				for thread := range next {
					if err := postRun(ctx, client, srv.URL, thread); err != nil {
						if fails.Add(1) == 1 {
							b.Logf("a run failed: %v", err)
						}
					}
				}
			})
		}
		for _, thread := range threads {
			next <- thread
		}
		close(next)
		wg.Wait()
		elapsed += time.Since(start)
		failed += int(fails.Load())
		cancel()
		lost += uncheckpointed(s, threads)
	}
	b.ReportMetric(0, "ns/op")
	if length == 0 {
		b.ReportMetric(float64(runs*b.N)/elapsed.Seconds(), "runs/s")
	} else {
		b.ReportMetric(elapsed.Seconds()/float64(b.N), "s")
	}
	b.ReportMetric(float64(failed)/float64(b.N), "failed")
	b.ReportMetric(float64(lost)/float64(b.N), "lost")
	b.ReportMetric(float64(warnings.n.Load())/float64(b.N), "warnings")
}

// postRun runs a run on thread through the relay at base, and reads its
// stream to the end.
func postRun(ctx context.Context, client *http.Client, base, thread string) error {
	input := fmt.Sprintf(`{"threadId":%q,"runId":"run-1","tools":[],"context":[],"state":{},`+
		`"messages":[{"id":"u1","role":"user","content":"hello"}]}`, thread)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/agent", bytes.NewReader([]byte(input)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return fmt.Errorf("thread %q: %w", thread, err)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("thread %q: %s: %s", thread, resp.Status, bytes.TrimSpace(body))
	case !bytes.Contains(body, []byte(`"type":"RUN_FINISHED"`)):
		return fmt.Errorf("thread %q: the stream ended before RUN_FINISHED: ...%s", thread, body[max(0, len(body)-200):])
	}
	return nil
}

// uncheckpointed returns how many of threads have, 10 s on, no checkpoint
// at their log's last position in s.
func uncheckpointed(s relay.Store, threads []string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	left := threads
	for deadline := time.Now().Add(10 * time.Second); len(left) > 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var still []string
		for _, thread := range left {
			if !checkpointed(ctx, s, thread) {
				still = append(still, thread)
			}
		}
		left = still
	}
	return len(left)
}

// checkpointed reports whether s holds a checkpoint of thread at the last
// position of its log.
func checkpointed(ctx context.Context, s relay.Store, thread string) bool {
	pos, _, err := s.LoadCheckpoint(ctx, thread)
	if err != nil {
		return false
	}
	for range s.Read(ctx, thread, pos) { // an entry past it, or an error
		return false
	}
	return true
}

// warnCount is a slog.Handler that counts the records at level Warn and
// above.
type warnCount struct{ n atomic.Int64 }

func (w *warnCount) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnCount) WithAttrs([]slog.Attr) slog.Handler           { return w }
func (w *warnCount) WithGroup(string) slog.Handler                { return w }
func (w *warnCount) Handle(context.Context, slog.Record) error {
	w.n.Add(1)
	return nil
}
