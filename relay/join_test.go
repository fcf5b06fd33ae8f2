// Tests of viewers joining a live run at every event boundary, checked with the reference client.

package relay_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/framing"
	"github.com/aguistate/aguistate/internal/oracle"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveJoin is a viewer who joined a run in progress after its first k
// events: by prelude, by Last-Event-ID, and by Follow with its stream cut.
type liveJoin struct {
	stream  string
	k       int        // the events the log held when the viewer joined
	whole   []sseEvent // the run's events, as the POST got them
	prelude []sseEvent // what a GET without Last-Event-ID got
	replay  []sseEvent // what a GET with Last-Event-ID k-1 got
}

// joinLive runs s through a relay whose agent waits before its event at
// index i, joins the run there three ways, and lets it end.
func joinLive(t *testing.T, s recordedStream, i int) liveJoin {
	a := newAgent(t, s.events)
	release := a.Hold(i)
	defer release()
	_, base := newRelay(t, a, relay.Options{})
	var thread struct{ ThreadID string }
	require.NoError(t, json.Unmarshal(s.input, &thread))
	url := base + "/threads/" + thread.ThreadID + "/events"

	// The log holds the agent's first i events, and the snapshot of the
	// input's state that the relay records when there is one.
	k := i + extraEvents(t, s.input)
	posted := openSSE(t, http.MethodPost, base+"/agent", s.input, "", k)
	<-posted.first
	prelude := openSSE(t, http.MethodGet, url, nil, "", 1)
	replay := openSSE(t, http.MethodGet, url, nil, strconv.Itoa(k-1), 1)
	follower := aguistate.New(nil)
	followed := make(chan error, 1)
	cut := &cutter{events: 3, responded: make(chan struct{})} // the relay answers once the viewer has joined
	go func() {
		_, err := follower.Follow(testContext(t), &aguistate.Agent{Client: &http.Client{Transport: cut}, Reconnects: 3}, url)
		followed <- err
	}()
	<-prelude.first
	<-replay.first
	select {
	case <-cut.responded:
	case err := <-followed:
		t.Fatalf("Follow ended before the run: %v", err)
	}
	release()

	j := liveJoin{stream: s.name, k: k, whole: posted.wait(t), prelude: prelude.wait(t), replay: replay.wait(t)}
	require.NoError(t, <-followed, "Follow with its stream cut after 3 events")
	assert.Equal(t, threadJSON(t, consumerOf(t, dataOf(j.whole)), true), threadJSON(t, follower, true), "Follow ends with the thread")
	return j
}

// sseStream is an SSE request in progress.
type sseStream struct {
	first  chan struct{} // closed once the first n events have come, or the stream has ended
	events chan []sseEvent
}

// openSSE sends a request with body (a GET when nil), Last-Event-ID
// lastID (none when "") and the header's name and value pairs, and reads
// its SSE answer, which must be 200; s.first is closed after its nth event.
func openSSE(t testing.TB, method, url string, body []byte, lastID string, n int, header ...string) *sseStream {
	s := &sseStream{first: make(chan struct{}), events: make(chan []sseEvent, 1)}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	go func() {
		var once sync.Once
		signal := func() { once.Do(func() { close(s.first) }) }
		defer signal()
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			s.events <- nil
			return
		}
		defer resp.Body.Close()
		var events []sseEvent
		f := framing.Fields{LastEventID: lastID}
		for data, err := range framing.ReadFields(resp.Body, framing.SSE, 0, 0, &f) {
			if err != nil {
				break
			}
			events = append(events, sseEvent{f.LastEventID, string(data)})
			if len(events) == n {
				signal()
			}
		}
		s.events <- events
	}()
	return s
}

// wait returns the events of the stream once it has ended.
func (s *sseStream) wait(t testing.TB) []sseEvent {
	select {
	case events := <-s.events:
		require.NotNil(t, events, "an SSE answer")
		return events
	case <-time.After(time.Minute):
		t.Fatal("the stream did not end")
		return nil
	}
}

// extraEvents returns how many events the relay records for a run with
// input on a new thread before the agent's second: one, a STATE_SNAPSHOT,
// when the input has a state other than {}.
func extraEvents(t testing.TB, input []byte) int {
	var in struct{ State json.RawMessage }
	require.NoError(t, json.Unmarshal(input, &in))
	var state any
	if in.State == nil || json.Unmarshal(in.State, &state) == nil && fmt.Sprint(state) == "map[]" {
		return 0
	}
	return 1
}

// raw returns events as JSON texts.
func raw(events [][]byte) []json.RawMessage {
	out := make([]json.RawMessage, len(events))
	for i, e := range events {
		out[i] = e
	}
	return out
}

// differs is the recorded stream whose thread is not the reference
// client's: the write rule skips its text events into a user message,
// which the reference client applies (the root package's
// sharedDifferences). A viewer who joins after them gets the thread
// without them.
const differs = "dart-messages-snapshot.jsonl"

// jsonEqual reports whether two JSON texts are the same value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestRelayJoinLive joins every recorded stream's run at every event
// boundary while it runs: a prelude brings a viewer to the thread and the
// rest takes it where the whole run takes the POST's client; Last-Event-ID
// replays exactly the events after it; Follow, cut, reconnects. The
// reference client, given the same events, ends with the same state and
// messages.
func TestRelayJoinLive(t *testing.T) {
	t.Parallel()
	var joins []liveJoin
	for _, s := range recordedStreams(t) {
		if multiRun(s.events) {
			continue // a viewer follows it run by run: TestRelayRecords
		}
		for i := 1; i < len(s.events); i++ {
			j := joinLive(t, s, i)
			where := fmt.Sprintf("%s joined after event %d", s.name, j.k)
			whole := consumerOf(t, dataOf(j.whole))

			require.NotEmpty(t, j.prelude, where)
			n := slices.IndexFunc(j.prelude, func(e sseEvent) bool { return e.id != "" })
			require.GreaterOrEqual(t, n, 1, "%s: a prelude", where)
			assert.Equal(t, strconv.Itoa(j.k), j.prelude[n].id, "%s: the prelude's last event names the position it brings the viewer to", where)
			assert.Equal(t, j.whole[j.k:], j.prelude[n+1:], "%s: the log's events follow the prelude to the run's end", where)
			assert.Equal(t, threadJSON(t, whole, true), threadJSON(t, consumerOf(t, dataOf(j.prelude)), true), where)
			assert.Equal(t, j.whole[j.k-1:], j.replay, "%s: Last-Event-ID %d replays the events after it", where, j.k-1)
			joins = append(joins, j)
		}
	}

	var cases []oracle.Case
	for _, j := range joins {
		cases = append(cases,
			oracle.Case{Events: raw(dataOf(j.whole))},
			oracle.Case{Events: raw(dataOf(j.prelude))},
			oracle.Case{Events: raw(append(dataOf(j.whole[:j.k-1]), dataOf(j.replay)...))})
	}
	results := oracle.Run(t, true, cases)
	for i, j := range joins {
		whole, prelude, replay := results[3*i], results[3*i+1], results[3*i+2]
		where := fmt.Sprintf("%s joined after event %d", j.stream, j.k)
		if j.stream == differs && (prelude.Error != "" || !jsonEqual(whole.Messages, prelude.Messages)) {
			continue // the thread skipped events that the reference client applies
		}
		require.Empty(t, whole.Error, where)
		require.Empty(t, prelude.Error, "%s: the reference client takes the prelude and what follows", where)
		require.Empty(t, replay.Error, where)
		assert.JSONEq(t, string(whole.State), string(prelude.State), "%s: state by prelude", where)
		assert.JSONEq(t, string(whole.Messages), string(prelude.Messages), "%s: messages by prelude", where)
		assert.JSONEq(t, string(whole.State), string(replay.State), "%s: state by Last-Event-ID", where)
		assert.JSONEq(t, string(whole.Messages), string(replay.Messages), "%s: messages by Last-Event-ID", where)
	}
	t.Logf("%d joins, each by prelude, by Last-Event-ID and by Follow cut after 3 events, checked with the reference client", len(joins))
}
