// Conformance test of viewers that join a run in progress while it streams: the seam between
// a join and the hub.

package storetest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRelayJoinSeam has viewers join a run in progress, on the relay that
// runs it and on another, by prelude and by Last-Event-ID, some of them
// slow readers that a small ViewerBuffer drops from the hub: each gets the
// log's events after its join position, each once and in order, up to the
// run's end.
func testRelayJoinSeam(t *testing.T, h Harness) {
	_, ns := open(t, h)
	store := h.Open(t, ns, "")
	agent := agenttest.NewScript(t, bigScript(40, 4<<10))
	agent.Pace(time.Millisecond)
	o := relay.Options{LeaseTTL: 500 * time.Millisecond, Retry: 10 * time.Millisecond, CheckpointEvery: 1000, KeepEvents: 1000,
		ViewerBuffer: 100}
	o.Store = h.Open(t, ns, "")
	a := startRelay(t, agent.URL, o)
	o.Store = h.Open(t, ns, "")
	b := startRelay(t, agent.URL, o)
	const thread = "seam"

	run := openLivePost(t, a.srv.URL+"/agent", fmt.Sprintf(`{"threadId":%q,"runId":"r1","messages":[]}`, thread))
	type viewer struct {
		name   string
		lastID string
		slow   bool
		s      *liveStream
	}
	var viewers []*viewer
	stall := make(chan struct{}) // the slow viewers read nothing until the run ends
	var got []liveEvent          // the POST's events so far
	for i := 0; ; i++ {
		e, ok := run.next(t)
		require.True(t, ok, "the POST's stream ends with the run's end")
		got = append(got, e)
		if endsRun(e.data) {
			break
		}
		if i%6 != 1 || len(viewers) >= 24 {
			continue
		}
		for k, base := range []string{a.srv.URL, b.srv.URL} {
			v := &viewer{name: fmt.Sprintf("after %d on %c", len(got), "ab"[k]), slow: len(viewers)%3 == 0}
			if len(viewers)%2 == 1 {
				v.lastID = got[len(got)/2].id
				v.name += " from " + v.lastID
			}
			if v.slow {
				v.s = openStalled(t, base+"/threads/"+thread+"/events", v.lastID, stall)
			} else {
				v.s = openLive(t, base+"/threads/"+thread+"/events", v.lastID)
			}
			require.Equal(t, http.StatusOK, v.s.resp.StatusCode, v.name)
			viewers = append(viewers, v)
		}
	}
	close(stall)
	log := logOf(t, store, thread)
	require.Equal(t, log, asEntries(t, got), "the POST: the whole run")

	var wg sync.WaitGroup
	for _, v := range viewers {
		wg.Go(func() {
			var events []liveEvent
			for e := range v.s.events {
				events = append(events, e)
			}
			from := 0 // the first event of the log's that follows the join
			if v.lastID == "" {
				for from < len(events) && events[from].id == "" {
					from++
				}
				if !assert.Less(t, from, len(events), "%s: a prelude and an event with an id", v.name) {
					return
				}
				from++ // the prelude's last event names the join position
			}
			after := int64(0)
			if from > 0 {
				after, _ = strconv.ParseInt(events[from-1].id, 10, 64)
			} else {
				after, _ = strconv.ParseInt(v.lastID, 10, 64)
			}
			want := log[after:]
			assert.Equal(t, want, asEntries(t, events[from:]), "%s: the log's events after %d, once each, to the run's end", v.name, after)
		})
	}
	wg.Wait()
}

// openLivePost sends POST url with the JSON body and reads the answer's
// events as they come, as openLive does.
func openLivePost(tb testing.TB, url, body string) *liveStream {
	tb.Helper()
	return openLiveRequest(tb, http.MethodPost, url, "", []byte(body))
}

// bigScript is script(n) with pieces of text of size bytes.
func bigScript(n, size int) func(input []byte) [][]byte {
	piece := strings.Repeat("x", size)
	return func(input []byte) [][]byte {
		events := script(n)(input)
		for i, e := range events {
			events[i] = bytes.Replace(e, []byte(`"delta":"piece `), []byte(`"delta":"`+piece+` `), 1)
		}
		return events
	}
}

// openStalled is openLive on a connection with a small receive buffer,
// whose answer is read only once stall is closed: the relay's writes to it
// block meanwhile.
func openStalled(tb testing.TB, url, lastID string, stall <-chan struct{}) *liveStream {
	tb.Helper()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4 << 10)
		}
		return c, err
	}
	tr := &http.Transport{DialContext: dial}
	tb.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(tb, err)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(tb, err)
	s := &liveStream{resp: resp, events: make(chan liveEvent, 1024), cancel: cancel}
	go s.read(lastID, stall)
	return s
}
