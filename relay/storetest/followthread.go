// Conformance tests of viewers that follow a thread across runs (?follow=thread): runs on
// two relays, a thread deleted under its followers.

package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/internal/framing"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveEvent is one event of a live SSE stream, with the stream's last
// event ID after it.
type liveEvent struct{ id, data string }

// liveStream is an SSE response read as it comes.
type liveStream struct {
	resp   *http.Response
	events chan liveEvent // closed at the stream's end
	err    error          // why it ended (nil at EOF); read once events is closed
	retry  time.Duration  // the retry field, once events is closed
	cancel context.CancelFunc
}

// openLive sends GET url with Last-Event-ID lastID (none when "") and
// reads the answer's events as they come, until it ends or tb does.
func openLive(tb testing.TB, url, lastID string) *liveStream {
	tb.Helper()
	return openLiveRequest(tb, http.MethodGet, url, lastID, nil)
}

// openLiveRequest is openLive for a request of method with body (none when
// nil), sent as JSON.
func openLiveRequest(tb testing.TB, method, url, lastID string, body []byte) *liveStream {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	require.NoError(tb, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	s := &liveStream{resp: resp, events: make(chan liveEvent, 1024), cancel: cancel}
	go s.read(lastID, nil)
	return s
}

// read sends the response's events to s.events until it ends, then closes
// it; when stall is not nil, it reads nothing before stall is closed.
func (s *liveStream) read(lastID string, stall <-chan struct{}) {
	defer close(s.events)
	defer s.resp.Body.Close()
	if stall != nil {
		<-stall
	}
	f := framing.Fields{LastEventID: lastID}
	for data, err := range framing.ReadFields(s.resp.Body, framing.SSE, 0, 0, &f) {
		if err != nil {
			s.err = err
			break
		}
		s.events <- liveEvent{f.LastEventID, string(data)}
	}
	s.retry = f.Retry
}

// close ends the request and waits for the reader to stop.
func (s *liveStream) close() {
	s.cancel()
	for range s.events {
	}
}

// next returns the stream's next event, or false at its end; it fails tb
// after 30 s without one.
func (s *liveStream) next(tb testing.TB) (liveEvent, bool) {
	tb.Helper()
	select {
	case e, ok := <-s.events:
		return e, ok
	case <-time.After(30 * time.Second):
		tb.Fatal("waited 30 s in vain for an event of the stream")
		return liveEvent{}, false
	}
}

// until returns the stream's events up to the n-th that ends a run, and
// fails tb if the stream ends first.
func (s *liveStream) until(tb testing.TB, n int) []liveEvent {
	tb.Helper()
	var got []liveEvent
	for ends := 0; ends < n; {
		e, ok := s.next(tb)
		if !ok { // s.err is the reader's to write until events is closed
			require.Fail(tb, "the stream ended early", "after %d events, %d runs: %v", len(got), ends, s.err)
		}
		got = append(got, e)
		if endsRun(e.data) {
			ends++
		}
	}
	return got
}

// ended waits for the stream's end, failing tb after 30 s or at an
// event, and returns why it ended (nil at EOF).
func (s *liveStream) ended(tb testing.TB) error {
	tb.Helper()
	e, ok := s.next(tb)
	require.False(tb, ok, "an event after the stream should have ended: %v", e)
	return s.err
}

// endsRun reports whether an event is a RUN_FINISHED or a RUN_ERROR.
func endsRun(event string) bool {
	var e struct{ Type string }
	_ = json.Unmarshal([]byte(event), &e)
	return e.Type == "RUN_FINISHED" || e.Type == "RUN_ERROR"
}

// asEntries returns the events of a stream as the log's entries they are,
// their ids as positions.
func asEntries(tb testing.TB, events []liveEvent) []relay.Entry {
	out := make([]relay.Entry, len(events))
	for i, e := range events {
		pos, err := strconv.ParseInt(e.id, 10, 64)
		require.NoError(tb, err, "event %d: its id %q is no position", i, e.id)
		out[i] = relay.Entry{Pos: pos, Event: []byte(e.data)}
	}
	return out
}

// testRelayFollowThread has a viewer follow a thread on relay a before the
// thread's first run, while two clients run three runs on relays a and b:
// on its one connection the viewer gets every event of the three, in
// order, each once, as the log holds them; a second viewer that joins b
// between runs gets the prelude, then the third run.
func testRelayFollowThread(t *testing.T, h Harness) {
	_, ns := open(t, h)
	store := h.Open(t, ns, "")
	agent := agenttest.NewScript(t, script(3))
	a := newRelayServer(t, agent.URL, h.Open(t, ns, ""), true)
	b := newRelayServer(t, agent.URL, h.Open(t, ns, ""), true)
	const thread = "t"
	events := "/threads/" + thread + "/events?follow=thread"

	v := openLive(t, a.srv.URL+events, "")
	require.Equal(t, http.StatusOK, v.resp.StatusCode, "a thread that does not exist yet")
	assert.Equal(t, "text/event-stream", v.resp.Header.Get("Content-Type"))

	ctx := testContext(t)
	c1, _ := client(t, a.srv.URL, thread)
	c2 := aguistate.New(nil)
	var late *liveStream
	for i, step := range []struct {
		c    *aguistate.Consumer
		base string
	}{{c1, a.srv.URL}, {c2, b.srv.URL}, {c1, b.srv.URL}} {
		if i > 0 { // the client catches up with the thread, then runs it
			_, err := step.c.Follow(ctx, &aguistate.Agent{}, step.base+"/threads/"+thread+"/events")
			require.NoError(t, err, "run %d: catching up", i+1)
			require.NoError(t, step.c.AddMessages(aguistate.UserMessage("again").WithID("u"+strconv.Itoa(i+1))))
		}
		if i == 2 {
			late = openLive(t, b.srv.URL+events, "")
			require.Equal(t, http.StatusOK, late.resp.StatusCode)
			late.until(t, 1) // the prelude ends with run 2's end
		}
		_, err := step.c.RunAgent(ctx, &aguistate.Agent{URL: step.base + "/agent"}, nil)
		require.NoError(t, err, "run %d", i+1)
	}
	log := logOf(t, store, thread)
	require.Len(t, runsOf(t, log), 3)

	got := asEntries(t, v.until(t, 3))
	assert.Equal(t, log, got, "the viewer on a: every event of the three runs, once, in order")
	v.close() // the stream goes on: the viewer leaves
	assert.Equal(t, 10*time.Millisecond, v.retry, "the retry field")

	second := late.until(t, 1)
	run3 := log[len(log)-len(second):]
	assert.Equal(t, run3, asEntries(t, second), "the viewer on b after its prelude: run 3")
}

// testRelayFollowDeleted deletes a thread (Store.Delete) under a viewer
// that follows it between runs: its stream ends, and its reconnect with
// its Last-Event-ID gets 204, which stops an EventSource; a viewer that
// waits for a thread's first run is not ended by the delete of a thread
// that does not exist.
func testRelayFollowDeleted(t *testing.T, h Harness) {
	_, ns := open(t, h)
	store := h.Open(t, ns, "")
	agent := agenttest.NewScript(t, script(2))
	a := newRelayServer(t, agent.URL, h.Open(t, ns, ""), true)
	c, ag := client(t, a.srv.URL, "t")
	_, err := c.RunAgent(testContext(t), ag, nil)
	require.NoError(t, err)
	url := a.srv.URL + "/threads/t/events?follow=thread"
	v := openLive(t, url, "")
	require.Equal(t, http.StatusOK, v.resp.StatusCode)
	prelude := v.until(t, 1)
	last := prelude[len(prelude)-1].id
	waiting := openLive(t, a.srv.URL+"/threads/none/events?follow=thread", "")
	require.Equal(t, http.StatusOK, waiting.resp.StatusCode)

	require.NoError(t, store.Delete(testContext(t), "t"))
	require.NoError(t, store.Delete(testContext(t), "none"))
	assert.NoError(t, v.ended(t), "the follower's stream ends")

	again := openLive(t, url, last)
	assert.Equal(t, http.StatusNoContent, again.resp.StatusCode, "a reconnect after the delete")
	assert.NoError(t, again.ended(t))

	c2, ag2 := client(t, a.srv.URL, "none") // the waiting viewer goes on: it gets the first run
	_, err = c2.RunAgent(testContext(t), ag2, nil)
	require.NoError(t, err)
	assert.Equal(t, logOf(t, store, "none"), asEntries(t, waiting.until(t, 1)))
}

// testRelayFollowResume reconnects a follower of a thread of two runs
// with a Last-Event-ID, as an EventSource does
// after a drop: it gets the events after it, across the runs' boundary,
// and a third run on the same connection, each once.
func testRelayFollowResume(t *testing.T, h Harness) {
	tests := []struct {
		name, reason string
		after        func(run int64) int64 // the Last-Event-ID, of a run's length
	}{
		{"mid run 1", "the rest of run 1, then runs 2 and 3", func(int64) int64 { return 3 }},
		{"end of run 1", "runs 2 and 3, from the boundary", func(run int64) int64 { return run }},
		{"end of run 2", "caught up: run 3 alone", func(run int64) int64 { return 2 * run }},
		{"zero", "every event, without a prelude", func(int64) int64 { return 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, ns := open(t, h)
			store := h.Open(t, ns, "")
			agent := agenttest.NewScript(t, script(2))
			a := newRelayServer(t, agent.URL, h.Open(t, ns, ""), true)
			c, ag := client(t, a.srv.URL, "t")
			for range 2 {
				_, err := c.RunAgent(testContext(t), ag, nil)
				require.NoError(t, err)
			}
			run := int64(len(logOf(t, store, "t")) / 2)
			after := tc.after(run)
			v := openLive(t, a.srv.URL+"/threads/t/events?follow=thread", strconv.FormatInt(after, 10))
			require.Equal(t, http.StatusOK, v.resp.StatusCode)
			_, err := c.RunAgent(testContext(t), ag, nil)
			require.NoError(t, err)
			log := logOf(t, store, "t")
			got := asEntries(t, v.until(t, 3-int(after/run)))
			assert.Equal(t, log[after:], got, tc.reason)
			v.close()
		})
	}
}

// testRelayFollowClosed closes a relay under its followers: one between
// runs, one waiting for a thread's first run, and one of a run, which
// gets the run's end (a RUN_ERROR of code CodeRelayStopped) first. Each
// stream ends, so that an EventSource reconnects, to another relay.
func testRelayFollowClosed(t *testing.T, h Harness) {
	store, ns := open(t, h)
	agent := agenttest.NewScript(t, script(2))
	a := newRelayServer(t, agent.URL, h.Open(t, ns, ""), true)
	c, ag := client(t, a.srv.URL, "t")
	_, err := c.RunAgent(testContext(t), ag, nil)
	require.NoError(t, err)
	idle := openLive(t, a.srv.URL+"/threads/t/events?follow=thread", strconv.Itoa(len(logOf(t, store, "t"))))
	waiting := openLive(t, a.srv.URL+"/threads/new/events?follow=thread", "")
	release := agent.Hold(3)
	defer release()
	ran := make(chan error, 1)
	go func() {
		c2, ag2 := client(t, a.srv.URL, "u")
		_, err := c2.RunAgent(testContext(t), ag2, nil)
		ran <- err
	}()
	running := openLive(t, a.srv.URL+"/threads/u/events?follow=thread", "")
	for _, v := range []*liveStream{idle, waiting, running} {
		require.Equal(t, http.StatusOK, v.resp.StatusCode)
	}
	_, ok := running.next(t) // the run has started
	require.True(t, ok)
	require.NoError(t, a.Close())
	<-ran
	for name, v := range map[string]*liveStream{"idle": idle, "waiting": waiting} {
		e, ok := <-v.events
		assert.False(t, ok, "%s: no event but the stream's end: %v", name, e)
		assert.NoError(t, v.err, name)
	}
	var last liveEvent
	for e := range running.events {
		last = e
	}
	assert.Contains(t, last.data, relay.CodeRelayStopped, "the run's end")
	assert.NoError(t, running.err, "then the stream's")
}
