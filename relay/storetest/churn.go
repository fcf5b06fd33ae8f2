// A bounded measurement of what a store holds while 100,000 threads come and go.

package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/require"
)

// The churn: churnThreads threads in rounds of churnRound, by churnWorkers
// at once, each round within churnRoundTime.
const (
	churnThreads   = 100_000
	churnRound     = 20_000
	churnWorkers   = 8
	churnRoundTime = 5 * time.Minute
	churnTTL       = time.Second
)

// churnEvents is the run each thread of the churn records: four events of
// about 100 bytes, and a checkpoint of 200 bytes after them.
var (
	churnEvents = [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"churn","runId":"run-1","input":{"messages":[]}}`),
		[]byte(`{"type":"TEXT_MESSAGE_START","messageId":"msg-0001","role":"assistant"}`),
		benchEvent,
		[]byte(`{"type":"RUN_FINISHED","threadId":"churn","runId":"run-1"}`),
	}
	churnCheckpoint = []byte(`{"v":1,"state":{},"messages":[{"id":"msg-0001","role":"assistant","content":"a few words of the answer, streamed"}],"run":{"threadId":"churn","runId":"run-1","finished":true},"pad":"` + strings.Repeat("x", 40) + `"}`)
)

// BenchChurn runs 100,000 threads through the stores that h opens, as a
// relay runs them (a lease with a run id, four events, a checkpoint, a
// release), and logs what the store holds (h.Size) every 20,000 threads:
//
//   - "delete" deletes each thread after its run;
//   - "expire" lets each expire (h.Expiring, a TTL of 1 s), and measures
//     again once the TTL has passed;
//   - "keep" keeps them: a bounded store evicts, another grows, by what
//     each thread costs it;
//   - "relay" runs each thread through a [relay.Relay] on the store, over
//     HTTP (POST /agent to a fake agent whose run streams five events),
//     and deletes it with DELETE /threads/{threadId}.
//
// It is a measurement, not a timed benchmark: run it once, alone, with
// -benchtime 1x. It reports the sizes after the last round, and threads/s.
func BenchChurn(b *testing.B, h Harness) {
	if h.Size == nil {
		b.Skip("the harness measures no size (Harness.Size)")
	}
	modes := []struct {
		name   string
		open   func(b *testing.B, ns string) relay.Store
		delete bool
	}{
		{"delete", func(b *testing.B, ns string) relay.Store { return h.Open(b, ns, "") }, true},
		{"expire", func(b *testing.B, ns string) relay.Store { return h.Expiring(b, ns, churnTTL) }, false},
		{"keep", func(b *testing.B, ns string) relay.Store { return h.Open(b, ns, "") }, false},
		{"relay", func(b *testing.B, ns string) relay.Store { return h.Open(b, ns, "") }, true},
	}
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) {
			if mode.name == "expire" && h.Expiring == nil {
				b.Skip("the harness opens no store with a TTL")
			}
			for range b.N {
				ns := namespace(b)
				s := mode.open(b, ns)
				one := func(ctx context.Context, id string) error { return churnThread(ctx, s, id, mode.delete) }
				if mode.name == "relay" {
					one = churnRelay(b, s)
				}
				churn(b, h, ns, s, one, mode.name == "expire")
			}
		})
	}
}

// churn runs churnThreads threads through one, on s, logging h.Size every
// round.
func churn(b *testing.B, h Harness, ns string, s relay.Store, one func(ctx context.Context, id string) error, expire bool) {
	ctx := context.Background() // each round has its own bound
	var sizes []map[string]float64
	var labels []string
	measure := func(label string) {
		sizes = append(sizes, h.Size(b, ns))
		labels = append(labels, label)
	}
	measure("start")
	start := time.Now()
	for round := range churnThreads / churnRound {
		roundCtx, cancel := context.WithTimeout(ctx, churnRoundTime)
		var next atomic.Int64
		next.Store(int64(round * churnRound))
		end := int64((round + 1) * churnRound)
		var wg sync.WaitGroup
		errs := make(chan error, churnWorkers)
		for range churnWorkers {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < end && roundCtx.Err() == nil; i = next.Add(1) - 1 {
					if err := one(roundCtx, fmt.Sprintf("churn-%06d", i)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		late := roundCtx.Err()
		cancel()
		close(errs)
		require.NoError(b, <-errs)
		require.NoError(b, late, "round %d within %s", round+1, churnRoundTime)
		measure(fmt.Sprint((round + 1) * churnRound))
	}
	elapsed := time.Since(start)
	if expire {
		time.Sleep(churnTTL + 3*time.Second)                // past the TTL, and a sweep or a use
		_ = s.Lease(ctx, "after", "relay", "", time.Second) // a call, for a store that removes as it is used
		measure("+5s")
	}
	names := slices.Sorted(maps.Keys(sizes[0]))
	var table strings.Builder
	fmt.Fprintf(&table, "%-8s", "threads")
	for _, n := range names {
		fmt.Fprintf(&table, " %14s", n)
	}
	for i, size := range sizes {
		fmt.Fprintf(&table, "\n%-8s", labels[i])
		for _, n := range names {
			fmt.Fprintf(&table, " %14.1f", size[n])
		}
	}
	b.Logf("%d threads in %s (%.0f threads/s):\n%s", churnThreads, elapsed.Round(time.Millisecond),
		churnThreads/elapsed.Seconds(), table.String())
	for _, n := range names {
		b.ReportMetric(sizes[len(sizes)-1][n], n)
	}
	b.ReportMetric(churnThreads/elapsed.Seconds(), "threads/s")
	b.ReportMetric(0, "ns/op")
}

// churnThread runs one thread as a relay runs it: a lease, the run's
// events, a checkpoint, the release; and deletes it when remove is true.
func churnThread(ctx context.Context, s relay.Store, id string, remove bool) error {
	if err := s.Lease(ctx, id, "relay", "run-1", churnTTL); err != nil {
		return err
	}
	if err := s.Append(ctx, id, 1, churnEvents...); err != nil {
		return err
	}
	if err := s.SaveCheckpoint(ctx, id, int64(len(churnEvents)), churnCheckpoint); err != nil {
		return err
	}
	if err := s.Release(ctx, id, "relay"); err != nil {
		return err
	}
	if remove {
		return s.Delete(ctx, id)
	}
	return nil
}

// churnRelay starts a relay on s in front of a fake agent, and returns a
// function that runs a thread through it over HTTP and deletes it, as a
// client would.
func churnRelay(b *testing.B, s relay.Store) func(ctx context.Context, id string) error {
	// An agent of its own: agenttest's keeps every request, which would be
	// measured with the relay.
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var in struct{ ThreadID, RunID string }
		_ = json.NewDecoder(req.Body).Decode(&in)
		ids := fmt.Sprintf(`"threadId":%q,"runId":%q`, in.ThreadID, in.RunID)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"RUN_STARTED",` + ids + `}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-0001","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-0001","delta":"a few words of the answer, streamed"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-0001"}`,
			`{"type":"RUN_FINISHED",` + ids + `}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
	}))
	b.Cleanup(agent.Close)
	// The relay's warnings (a store's error behind a 503) go to standard error.
	// The default LeaseTTL bounds each store call: a loaded machine's
	// PostgreSQL takes more than the scenarios' 500 ms.
	srv := startRelay(b, agent.URL, relay.Options{Store: s,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: churnWorkers}}
	b.Cleanup(client.CloseIdleConnections)
	do := func(ctx context.Context, method, url string, body []byte, want int) error {
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		text, err := io.ReadAll(resp.Body)
		switch {
		case err != nil:
			return err
		case resp.StatusCode != want:
			return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, text)
		case method == http.MethodPost && !bytes.Contains(text, []byte(`"RUN_FINISHED"`)):
			return fmt.Errorf("%s %s: the run did not finish: %s", method, url, text)
		}
		return nil
	}
	return func(ctx context.Context, id string) error {
		input := fmt.Appendf(nil, `{"threadId":%q,"runId":"run-1","messages":[{"id":"u1","role":"user","content":"hello"}]}`, id)
		if err := do(ctx, http.MethodPost, srv.srv.URL+"/agent", input, http.StatusOK); err != nil {
			return err
		}
		return do(ctx, http.MethodDelete, srv.srv.URL+"/threads/"+id, nil, http.StatusNoContent)
	}
}
