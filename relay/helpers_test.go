// Test helpers: fake agents, relays on test servers, and an SSE reader.

package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/internal/framing"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/require"
)

// newAgent starts a fake agent whose runs stream events.
func newAgent(t testing.TB, events [][]byte) *agenttest.Agent { return agenttest.New(t, events) }

// newRelay starts a relay in front of a, configured by o but with fast
// reconnects, and returns it with its base URL.
func newRelay(t testing.TB, a *agenttest.Agent, o relay.Options) (*relay.Relay, string) {
	if o.Retry == 0 {
		o.Retry = time.Millisecond
	}
	r := relay.New(&aguistate.Agent{URL: a.URL}, &o)
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		_ = r.Close()
		srv.Close()
	})
	return r, srv.URL
}

// serve serves r on a loopback address until t ends, closing it then, and
// returns its base URL.
func serve(t testing.TB, r *relay.Relay) string {
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		_ = r.Close()
		srv.Close()
	})
	return srv.URL
}

// serveFunc serves handler on a loopback address until t ends, and returns
// its base URL.
func serveFunc(t testing.TB, handler http.HandlerFunc) string {
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sseEvent is one event of an SSE stream: its data, and the stream's last
// event ID after it.
type sseEvent struct {
	id   string
	data string
}

// readSSE returns the events of an SSE body, with the last event ID after
// each, and the error that ended it (nil at EOF).
func readSSE(body io.Reader, lastID string) ([]sseEvent, error) {
	f := framing.Fields{LastEventID: lastID}
	var events []sseEvent
	for data, err := range framing.ReadFields(body, framing.SSE, 0, 0, &f) {
		if err != nil {
			return events, err
		}
		events = append(events, sseEvent{f.LastEventID, string(data)})
	}
	return events, nil
}

// get sends GET url with Last-Event-ID lastID (none when ""), and returns
// the status and the events.
func get(t testing.TB, url, lastID string) (int, []sseEvent) {
	t.Helper()
	return sendSSE(t, http.MethodGet, url, nil, lastID)
}

// sendSSE sends a request of method to url, with body as JSON when not nil
// and Last-Event-ID lastID (none when ""), and returns the status and the
// events of the answer.
func sendSSE(t testing.TB, method, url string, body []byte, lastID string) (int, []sseEvent) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	events, err := readSSE(resp.Body, lastID)
	require.NoError(t, err)
	return resp.StatusCode, events
}

// post sends a run input to the relay's POST /agent, and returns the
// status and the events.
func post(t testing.TB, base string, input []byte) (int, []sseEvent) {
	t.Helper()
	resp, err := http.Post(base+"/agent", "application/json", bytes.NewReader(input))
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Logf("POST /agent: %s: %s", resp.Status, body)
		return resp.StatusCode, nil
	}
	events, err := readSSE(resp.Body, "")
	require.NoError(t, err)
	return resp.StatusCode, events
}

// dataOf returns the data of events.
func dataOf(events []sseEvent) [][]byte {
	out := make([][]byte, len(events))
	for i, e := range events {
		out[i] = []byte(e.data)
	}
	return out
}

// consumerOf returns a Consumer that has applied events from nothing.
func consumerOf(t testing.TB, events [][]byte) *aguistate.Consumer {
	t.Helper()
	c := aguistate.New(nil)
	for i, ev := range events {
		require.NoError(t, c.Apply(ev), "event %d: %s", i+1, ev)
	}
	return c
}

// threadJSON returns a Consumer's state and messages as JSON, as GET
// /threads/{threadId} returns them; with idsOnly, only the messages that
// have an id, which a prelude carries.
func threadJSON(t testing.TB, c *aguistate.Consumer, idsOnly ...bool) string {
	t.Helper()
	messages := c.Messages()
	if len(idsOnly) > 0 && idsOnly[0] {
		messages = slices.DeleteFunc(messages, func(m aguistate.Message) bool { return m.ID() == "" })
	}
	b, err := json.Marshal(map[string]any{"state": c.State(), "messages": messages})
	require.NoError(t, err)
	return string(b)
}

// getThread returns GET /threads/{threadId}.
func getThread(t testing.TB, base, thread string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + "/threads/" + thread)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// recordedStream is a recorded stream and the run input that made it.
type recordedStream struct {
	name   string
	input  []byte // a RunAgentInput
	events [][]byte
}

// recordedStreams returns every recorded stream of ../../shared/streams
// that begins with RUN_STARTED (the bare ones no agent run sends), with its
// input, and those of ../testdata/join with an input of their own.
func recordedStreams(t testing.TB) []recordedStream {
	dir := filepath.Join("..", "..", "shared", "streams")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI: %v", dir, err)
		}
		t.Skipf("%s not found (clone the repository next to shared/ to run this test): %v", dir, err)
	}
	var out []recordedStream
	for _, d := range []string{dir, filepath.Join("..", "testdata", "join")} {
		for _, pattern := range []string{"*.sse", "*.jsonl"} {
			files, err := filepath.Glob(filepath.Join(d, pattern))
			require.NoError(t, err)
			for _, file := range files {
				f, err := os.Open(file)
				require.NoError(t, err)
				var events [][]byte
				for text, err := range aguistate.ReadEvents(f, nil) {
					require.NoError(t, err)
					events = append(events, bytes.Clone(text))
				}
				f.Close()
				var start struct{ Type, ThreadID, RunID string }
				require.NoError(t, json.Unmarshal(events[0], &start))
				if start.Type != "RUN_STARTED" {
					continue
				}
				input, err := os.ReadFile(strings.TrimSuffix(file, filepath.Ext(file)) + ".input.json")
				if err != nil {
					input = []byte(`{"state":{},"messages":[]}`)
				}
				out = append(out, recordedStream{name: filepath.Base(file), input: withIDs(t, input, start.ThreadID, start.RunID), events: events})
			}
		}
	}
	return out
}

// withIDs returns the run input with the given thread and run ids, and
// tools and context, as a client sends it.
func withIDs(t testing.TB, input []byte, thread, run string) []byte {
	var in map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(input, &in))
	in["threadId"], _ = json.Marshal(thread)
	in["runId"], _ = json.Marshal(run)
	for name, empty := range map[string]string{"state": "{}", "messages": "[]", "tools": "[]", "context": "[]"} {
		if in[name] == nil {
			in[name] = json.RawMessage(empty)
		}
	}
	out, err := json.Marshal(in)
	require.NoError(t, err)
	return out
}

// testContext returns a context that ends with the test, or after a minute.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// endsRun reports whether an event is a RUN_FINISHED or RUN_ERROR.
func endsRun(event string) bool {
	var e struct{ Type string }
	_ = json.Unmarshal([]byte(event), &e)
	return e.Type == "RUN_FINISHED" || e.Type == "RUN_ERROR"
}
