// Tests of Agent and RunAgent against httptest agents: the request, the
// result, and each kind of failure.

package aguistate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newAgent starts an httptest server that answers every request with
// handler, and closes it when the test ends (which waits for the handlers).
func newAgent(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

// serveEvents writes each chunk and flushes after it, so that the client
// reads the events one at a time as a live agent sends them.
func serveEvents(w http.ResponseWriter, contentType string, chunks []string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	for _, chunk := range chunks {
		_, _ = io.WriteString(w, chunk)
		w.(http.Flusher).Flush()
	}
}

// sseChunks frames each event as one server-sent event.
func sseChunks(events ...string) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = "data: " + ev + "\n\n"
	}
	return out
}

// recordedRun is a real recorded SSE run of ../shared/streams with its run
// input and the reference client's result.
type recordedRun struct {
	input          []byte   // the RunAgentInput JSON
	chunks         []string // the stream, one SSE event (with its id line) per chunk
	state, message string   // the expected state and messages (JSON text)
}

func loadRecordedRun(t *testing.T, name string) recordedRun {
	t.Helper()
	dir := sharedDir(t, "streams")
	input, err := os.ReadFile(filepath.Join(dir, name+".input.json"))
	require.NoError(t, err)
	stream, err := os.ReadFile(filepath.Join(dir, name+".sse"))
	require.NoError(t, err)
	var chunks []string
	for ev := range strings.SplitAfterSeq(string(stream), "\n\n") {
		chunks = append(chunks, ev)
	}
	require.Greater(t, len(chunks), 2, "the recorded stream has events")
	var expected struct {
		State    json.RawMessage `json:"state"`
		Messages json.RawMessage `json:"messages"`
	}
	readJSON(t, filepath.Join(dir, "expected", name+".json"), &expected)
	return recordedRun{input: input, chunks: chunks, state: string(expected.State), message: string(expected.Messages)}
}

func TestRunAgent(t *testing.T) {
	const inlineInput = `{"threadId":"t1","runId":"r0","state":{"n":12345678901234567890,"s":"<a&b>","f":1.50},` +
		`"messages":[{"id":"u1","role":"user","content":"hi <there>"}]}`
	inline := []string{
		`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`,
		`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/m","value":12345678901234567891}]}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"a1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"hel"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"lo"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"a1"}`,
	}
	finished := `{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`
	inlineState := `{"n":12345678901234567890,"s":"<a&b>","f":1.50,"m":12345678901234567891}`
	inlineMessages := `[{"id":"u1","role":"user","content":"hi <there>"},{"id":"a1","role":"assistant","content":"hello"}]`
	// What the request must carry, byte for byte.
	inlineRequest := map[string]string{
		"threadId": `"t1"`,
		"runId":    `"r1"`,
		"state":    `{"n":12345678901234567890,"s":"<a&b>","f":1.50}`,
		"messages": `[{"id":"u1","role":"user","content":"hi <there>"}]`,
		"tools":    `[]`,
	}
	jsonl := make([]string, 0, len(inline)+1)
	for _, ev := range append(inline, finished) {
		jsonl = append(jsonl, ev+"\n")
	}

	cases := []struct {
		name, reason string
		recorded     string            // a recorded run in ../shared/streams, or ""
		input        string            // the run input given to StartRun (inline rows)
		runID        string            // RunAgentInput.RunID
		chunks       []string          // the response body, one flush after each chunk
		contentType  string            // the response's Content-Type
		wantRequest  map[string]string // request body members, exact JSON text
		wantState    string            // by value
		wantMessages string            // by value
	}{{
		name:     "recorded interrupt run",
		reason:   "a real agent's SSE run, streamed event by event, ends as the reference client ends",
		recorded: "goex-agentic-interrupt-run1",
		runID:    "r",
		wantRequest: map[string]string{
			"threadId": `"t"`, "runId": `"r"`, "state": `{}`, "messages": `[]`,
		},
		contentType: "text/event-stream",
	}, {
		name:         "inline SSE",
		reason:       "state numbers and <, & travel to the agent byte for byte, and the events apply",
		input:        inlineInput,
		runID:        "r1",
		chunks:       sseChunks(append(inline, finished)...),
		contentType:  "text/event-stream; charset=utf-8",
		wantRequest:  inlineRequest,
		wantState:    inlineState,
		wantMessages: inlineMessages,
	}, {
		name:         "JSON Lines body",
		reason:       "a 2xx body in another framing is read anyway (ReadEvents detects it)",
		input:        inlineInput,
		runID:        "r1",
		chunks:       jsonl,
		contentType:  "application/jsonl",
		wantRequest:  inlineRequest,
		wantState:    inlineState,
		wantMessages: inlineMessages,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			input, chunks := []byte(tc.input), tc.chunks
			wantState, wantMessages := tc.wantState, tc.wantMessages
			if tc.recorded != "" {
				run := loadRecordedRun(t, tc.recorded)
				input, chunks = run.input, run.chunks
				wantState, wantMessages = run.state, run.message
			}
			srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
				assert.Equal(t, http.MethodPost, r.Method)
				assert.Equal(t, "text/event-stream", r.Header.Get("Accept"))
				assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
				var body map[string]json.RawMessage
				assert.NoError(t, json.NewDecoder(r.Body).Decode(&body))
				got := make(map[string]string, len(tc.wantRequest))
				for name := range tc.wantRequest {
					got[name] = string(body[name])
				}
				assert.Equal(t, tc.wantRequest, got, "request body; %s", tc.reason)
				serveEvents(w, tc.contentType, chunks)
			})

			c := New(nil)
			require.NoError(t, startRun(c, string(input)))
			var warnings []error
			c.Subscribe(func(ch Change) {
				if ch.Warning != nil {
					warnings = append(warnings, ch.Warning)
				}
			})
			res, err := c.RunAgent(context.Background(), &Agent{URL: srv.URL, Client: srv.Client()}, &RunOptions{RunID: tc.runID})
			require.NoError(t, err, tc.reason)
			assert.NotEmpty(t, res.Outcome)
			assert.Empty(t, warnings, "no event is skipped")
			assertJSONEqual(t, mustParse(t, wantState), c.State().node(), "state; "+tc.reason)
			assertJSONEqual(t, mustParse(t, wantMessages), encodeMessages(c.Messages()), "messages; "+tc.reason)
		})
	}
}

// A nil Client is http.DefaultClient.
func TestRunAgentDefaultClient(t *testing.T) {
	srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		serveEvents(w, "text/event-stream", sseChunks(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
			`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`))
	})
	c := New(nil)
	_, err := c.RunAgent(context.Background(), &Agent{URL: srv.URL}, nil)
	require.NoError(t, err)
	_, err = c.RunAgent(context.Background(), nil, nil)
	assert.ErrorContains(t, err, "nil *Agent")
}

func TestRunAgentHTTPError(t *testing.T) {
	long := strings.Repeat("0123456789", 60) // 600 bytes
	html := "<!DOCTYPE html><html><body>Sign in to continue</body></html>"
	cases := []struct {
		name, reason string
		status       int
		contentType  string
		body         string
		want         HTTPError
		wantText     string
	}{{
		name:        "500 with a body",
		reason:      "a failing agent's status and the start of its explanation are reported",
		status:      http.StatusInternalServerError,
		contentType: "text/plain; charset=utf-8",
		body:        "model crashed\n",
		want:        HTTPError{StatusCode: 500, Status: "500 Internal Server Error", ContentType: "text/plain; charset=utf-8", Body: "model crashed\n"},
		wantText:    "aguistate: agent answered 500 Internal Server Error: model crashed",
	}, {
		name:        "404 without a body",
		reason:      "a wrong URL is an HTTPError too",
		status:      http.StatusNotFound,
		contentType: "text/plain",
		want:        HTTPError{StatusCode: 404, Status: "404 Not Found", ContentType: "text/plain"},
		wantText:    "aguistate: agent answered 404 Not Found",
	}, {
		name:        "long body is cut",
		reason:      "at most 512 bytes of the body are kept",
		status:      http.StatusBadGateway,
		contentType: "text/plain",
		body:        long,
		want:        HTTPError{StatusCode: 502, Status: "502 Bad Gateway", ContentType: "text/plain", Body: long[:512]},
		wantText:    "aguistate: agent answered 502 Bad Gateway: " + long[:512],
	}, {
		name:        "HTML page with 200",
		reason:      "a login page sent with 200 is no event stream, and the error names its type",
		status:      http.StatusOK,
		contentType: "text/html; charset=utf-8",
		body:        html,
		want:        HTTPError{StatusCode: 200, Status: "200 OK", ContentType: "text/html; charset=utf-8", Body: html},
		wantText:    `aguistate: agent answered 200 OK with Content-Type "text/html; charset=utf-8", not an event stream: ` + html,
	}, {
		name:        "protobuf with 200",
		reason:      "AG-UI's protobuf framing is not one this package reads",
		status:      http.StatusOK,
		contentType: "application/vnd.ag-ui.event+proto",
		body:        "\x0a\x02",
		want:        HTTPError{StatusCode: 200, Status: "200 OK", ContentType: "application/vnd.ag-ui.event+proto", Body: "\x0a\x02"},
		wantText:    `aguistate: agent answered 200 OK with Content-Type "application/vnd.ag-ui.event+proto", not an event stream`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			c := New(nil)
			require.NoError(t, startRun(c, `{"threadId":"t","state":{"a":1},"messages":[{"id":"u","role":"user","content":"x"}]}`))
			_, err := c.RunAgent(context.Background(), &Agent{URL: srv.URL, Client: srv.Client()}, nil)
			var he *HTTPError
			require.ErrorAs(t, err, &he, tc.reason)
			assert.Equal(t, tc.want, *he, tc.reason)
			assert.True(t, strings.HasPrefix(err.Error(), tc.wantText), "%q does not begin with %q", err, tc.wantText)
			assert.Equal(t, `{"a":1}`, c.State().String(), "the Consumer holds nothing of the response")
			assert.Len(t, c.Messages(), 1)
		})
	}
}

// TestRunAgentLastEventWithoutBlankLine checks that a last SSE event whose
// data is whole JSON applies without its blank line, as in the reference
// client.
func TestRunAgentLastEventWithoutBlankLine(t *testing.T) {
	t.Parallel()
	srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		serveEvents(w, "text/event-stream", append(sseChunks(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
			`data: {"type":"RUN_FINISHED","threadId":"t","runId":"r","result":1}`))
	})
	res, err := New(nil).RunAgent(context.Background(), &Agent{URL: srv.URL, Client: srv.Client()}, nil)
	require.NoError(t, err)
	assert.Equal(t, "1", res.Result.String())
}

// TestRunAgentContentTypes checks the Content-Types of an event stream,
// each read in the framing its body has.
func TestRunAgentContentTypes(t *testing.T) {
	t.Parallel()
	events := []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, `{"type":"STATE_SNAPSHOT","snapshot":{"ok":true}}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`}
	lines := strings.Join(events, "\n") + "\n"
	array := "[" + strings.Join(events, ",") + "]"
	sse := strings.Join(sseChunks(events...), "")
	for _, tc := range []struct{ contentType, body, reason string }{
		{"text/event-stream", sse, "AG-UI's SSE transport"},
		{"text/event-stream;charset=UTF-8", sse, "parameters and case do not matter"},
		{"Application/JSON", array, "a JSON array of events"},
		{"application/jsonl", lines, "JSON Lines"},
		{"application/x-ndjson", lines, "JSON Lines under its other name"},
		{"", sse, "no Content-Type: the body decides"},
	} {
		t.Run(tc.contentType, func(t *testing.T) {
			t.Parallel()
			srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = []string{tc.contentType} // "" stops net/http sniffing one
				_, _ = io.WriteString(w, tc.body)
			})
			c := New(nil)
			_, err := c.RunAgent(context.Background(), &Agent{URL: srv.URL, Client: srv.Client()}, nil)
			require.NoError(t, err, tc.reason)
			assert.Equal(t, `{"ok":true}`, c.State().String(), tc.reason)
		})
	}
}

// TestRunAgentSniffedContentType checks what docs/testing.md tells authors of
// httptest agents: a handler that sets no Content-Type gets one sniffed by
// net/http, text/plain, and RunAgent refuses it.
func TestRunAgentSniffedContentType(t *testing.T) {
	t.Parallel()
	srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, strings.Join(sseChunks(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
			`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`), ""))
	})
	c := New(nil)
	_, err := c.RunAgent(context.Background(), &Agent{URL: srv.URL, Client: srv.Client()}, nil)
	var he *HTTPError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "text/plain; charset=utf-8", he.ContentType, "net/http's sniffed type")
	assert.False(t, c.Running(), "nothing of the body applied")
}

func TestRunAgentBrokenStream(t *testing.T) {
	started := `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`
	snap := `{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}`
	finished := `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`
	cases := []struct {
		name, reason string
		contentType  string
		chunks       []string
		abort        bool // drop the connection without ending the chunked body
		check        func(t *testing.T, err error)
		wantState    string
	}{{
		name:   "cut mid-event",
		reason: "a connection cut inside an event is the transport's unexpected EOF, and the cut event is not applied",
		chunks: append(sseChunks(started, snap), `data: {"type":"STATE_SNAPSHOT","snapshot":{"a":`),
		abort:  true,
		check: func(t *testing.T, err error) {
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "the transport's error, as it is")
			assert.NotErrorIs(t, err, errNoRunEnd)
		},
		wantState: `{"a":1}`,
	}, {
		name:   "cut between events",
		reason: "a dropped connection is reported even when no event was cut",
		chunks: sseChunks(started, snap),
		abort:  true,
		check: func(t *testing.T, err error) {
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			assert.NotErrorIs(t, err, errNoRunEnd)
		},
		wantState: `{"a":1}`,
	}, {
		name:   "clean end without RUN_FINISHED",
		reason: "a run's stream is complete only when it says so",
		chunks: sseChunks(started, snap),
		check: func(t *testing.T, err error) {
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			assert.Equal(t, "aguistate: the stream ended before RUN_FINISHED or RUN_ERROR", err.Error())
		},
		wantState: `{"a":1}`,
	}, {
		name:   "SSE event cut at a clean end",
		reason: "an SSE event cut short at the end is not applied, and the body was cut short",
		chunks: append(sseChunks(started, snap), `data: {"type":"RUN_FINISHED","threadId":"t"`+"\n"),
		check: func(t *testing.T, err error) {
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			assert.NotErrorIs(t, err, errNoRunEnd)
		},
		wantState: `{"a":1}`,
	}, {
		name:        "JSON Lines cut at a clean end",
		reason:      "a last line cut short is io.ErrUnexpectedEOF, not a malformed event",
		contentType: "application/jsonl",
		chunks:      []string{started + "\n", snap + "\n", `{"type":"RUN_FINI`},
		check:       func(t *testing.T, err error) { assert.ErrorIs(t, err, io.ErrUnexpectedEOF) },
		wantState:   `{"a":1}`,
	}, {
		name:        "JSON array cut at a clean end",
		reason:      "an array without its closing bracket is io.ErrUnexpectedEOF, not a malformed event",
		contentType: "application/json",
		chunks:      []string{"[" + started + ",", snap + ",", `{"type":"RUN_FINI`},
		check:       func(t *testing.T, err error) { assert.ErrorIs(t, err, io.ErrUnexpectedEOF) },
		wantState:   `{"a":1}`,
	}, {
		name:      "empty body",
		reason:    "a 200 with nothing in it is not a finished run",
		check:     func(t *testing.T, err error) { assert.ErrorIs(t, err, errNoRunEnd) },
		wantState: `{}`,
	}, {
		name:   "fatal event",
		reason: "a malformed event stops the run with its *EventError",
		chunks: sseChunks(started, snap, `{"type":"STATE_DELTA","delta":{}}`, finished),
		check: func(t *testing.T, err error) {
			var ee *EventError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, 3, ee.Position)
			assert.ErrorIs(t, err, errMalformedPatch)
		},
		wantState: `{"a":1}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
				contentType := tc.contentType
				if contentType == "" {
					contentType = "text/event-stream"
				}
				serveEvents(w, contentType, tc.chunks)
				if tc.abort {
					panic(http.ErrAbortHandler)
				}
			})
			c := New(nil)
			_, err := c.RunAgent(context.Background(), &Agent{URL: srv.URL, Client: srv.Client()}, nil)
			require.Error(t, err, tc.reason)
			var he *HTTPError
			var re *RunError
			assert.False(t, errors.As(err, &he), "not an HTTPError: %v", err)
			assert.False(t, errors.As(err, &re), "not a RunError: %v", err)
			if !errors.Is(err, ErrMalformedEvent) {
				var ee *EventError
				assert.False(t, errors.As(err, &ee), "no event to blame: %v", err)
			}
			tc.check(t, err)
			assert.Equal(t, tc.wantState, c.State().String(), tc.reason)
		})
	}
}

func TestRunAgentContext(t *testing.T) {
	cases := []struct {
		name, reason string
		// ctx returns the run's context and a function to call once the
		// first event is applied.
		ctx  func() (context.Context, func(), context.CancelFunc)
		want error
	}{{
		name:   "cancelled",
		reason: "cancelling ctx aborts a read that blocks on a stalled agent",
		ctx: func() (context.Context, func(), context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, cancel, cancel
		},
		want: context.Canceled,
	}, {
		name:   "deadline",
		reason: "a deadline ends a stalled run the same way",
		ctx: func() (context.Context, func(), context.CancelFunc) {
			// Long enough for the first event on a loaded machine, which
			// the check of the state needs.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			return ctx, func() {}, cancel
		},
		want: context.DeadlineExceeded,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
				serveEvents(w, "text/event-stream", sseChunks(`{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}`))
				select { // stall mid-stream
				case <-release:
				case <-r.Context().Done():
				}
			})
			t.Cleanup(func() { close(release) }) // runs before srv.Close, so no handler is left blocked

			ctx, onFirst, cancel := tc.ctx()
			defer cancel()
			c := New(nil)
			c.Subscribe(func(Change) { onFirst() })
			start := time.Now()
			_, err := c.RunAgent(ctx, &Agent{URL: srv.URL, Client: srv.Client()}, nil)
			assert.Equal(t, tc.want, err, "ctx's own error; %s", tc.reason)
			assert.Less(t, time.Since(start), 10*time.Second, "returns promptly")
			assert.Equal(t, `{"a":1}`, c.State().String(), "the event before the stall is applied")
		})
	}

	t.Run("before the response", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		t.Cleanup(func() { close(release) })
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := New(nil).RunAgent(ctx, &Agent{URL: srv.URL, Client: srv.Client()}, nil)
		assert.Equal(t, context.DeadlineExceeded, err, "ctx's own error, not the client's")
	})
}

// TestHTTPErrorTextIsValidUTF8 checks that a body excerpt cut inside a
// character still gives a valid message.
func TestHTTPErrorTextIsValidUTF8(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("é", 256)[:511] // the last character cut in half
	e := &HTTPError{StatusCode: 500, Status: "500 Internal Server Error", Body: body}
	assert.True(t, utf8.ValidString(e.Error()))
	assert.Equal(t, body, e.Body, "the field keeps the bytes as sent")
}

// scriptedAgent starts an agent that answers each run with the SSE events
// script returns for the request body it got, and counts the requests.
func scriptedAgent(t *testing.T, script func(body map[string]json.RawMessage, r *http.Request) []string) (*Agent, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		var body map[string]json.RawMessage
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		serveEvents(w, "text/event-stream", sseChunks(script(body, r)...))
	})
	return &Agent{URL: srv.URL, Client: srv.Client()}, &n
}

// TestRunAgentResult checks the RunResult of each way a run finishes.
func TestRunAgentResult(t *testing.T) {
	t.Parallel()
	started := `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`
	text := `{"type":"TEXT_MESSAGE_CHUNK","messageId":"a1","delta":"hi"}`
	cases := []struct {
		name, reason   string
		finished       string
		wantOutcome    string
		wantInterrupts string // JSON array, "" for none
		wantResult     string // JSON text of Result
	}{
		{"success", "no outcome reads as success; result is kept verbatim",
			`{"type":"RUN_FINISHED","threadId":"t","runId":"r","result":{"n":1.50}}`, "success", "", `{"n":1.50}`},
		{"explicit success", "outcome success",
			`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"}}`, "success", "", "null"},
		{"interrupt", "the pending interrupts come with the outcome",
			`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"confirm"}]}}`,
			"interrupt", `[{"id":"i1","reason":"confirm"}]`, "null"},
		{"cancelled", "AG-UI 1.0's cancelled outcome",
			`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"}}`, "cancelled", "", "null"},
		{"unknown outcome", "an outcome of another type reads as success, as in the reference client",
			`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"suspended"}}`, "success", "", "null"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			agent, _ := scriptedAgent(t, func(map[string]json.RawMessage, *http.Request) []string {
				return []string{started, text, tc.finished}
			})
			c := New(nil)
			require.NoError(t, startRun(c, `{"messages":[{"id":"u0","role":"user","content":"held before"}]}`))
			res, err := c.RunAgent(context.Background(), agent, nil)
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.wantOutcome, res.Outcome, tc.reason)
			assert.Equal(t, tc.wantResult, res.Result.String(), tc.reason)
			if tc.wantInterrupts == "" {
				assert.Nil(t, res.Interrupts, tc.reason)
			} else {
				got, _ := json.Marshal(res.Interrupts)
				assert.Equal(t, tc.wantInterrupts, string(got), tc.reason)
			}
			require.Len(t, res.NewMessages, 1, "only the message the run added")
			assert.Equal(t, "a1", res.NewMessages[0].ID())
			assert.Equal(t, "hi", res.NewMessages[0].Text())
		})
	}
}

// TestRunAgentRunError checks that RUN_ERROR is a *RunError with the
// agent's message and code, distinct from the other failures, and that the
// events before it stay.
func TestRunAgentRunError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, event, wantText string
		want                  RunError
	}{
		{"with code", `{"type":"RUN_ERROR","message":"model overloaded","code":"503"}`,
			"aguistate: run failed: model overloaded (code 503)", RunError{Message: "model overloaded", Code: "503"}},
		{"without code", `{"type":"RUN_ERROR","message":"boom"}`, "aguistate: run failed: boom", RunError{Message: "boom"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			agent, _ := scriptedAgent(t, func(map[string]json.RawMessage, *http.Request) []string {
				return []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
					`{"type":"TEXT_MESSAGE_CHUNK","messageId":"a1","delta":"partial"}`, tc.event}
			})
			c := New(nil)
			res, err := c.RunAgent(context.Background(), agent, nil)
			var re *RunError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tc.want, *re)
			assert.Equal(t, tc.wantText, err.Error())
			var ee *EventError
			var he *HTTPError
			assert.False(t, errors.As(err, &ee) || errors.As(err, &he), "a RUN_ERROR is neither an event error nor an HTTP error")
			assert.NotErrorIs(t, err, io.ErrUnexpectedEOF)
			require.Len(t, res.NewMessages, 1, "the messages that arrived are reported")
			assert.Equal(t, "partial", c.Messages()[0].Text(), "the events before RUN_ERROR stay")
		})
	}
}

// TestRunAgentLoadsInput checks that RunAgent sends the thread and loads
// what it sends: the state set locally is the deltas' baseline, the thread
// id stays across runs, and each run has a new run id.
func TestRunAgentLoadsInput(t *testing.T) {
	t.Parallel()
	var bodies []map[string]json.RawMessage
	var mu sync.Mutex
	agent, _ := scriptedAgent(t, func(body map[string]json.RawMessage, r *http.Request) []string {
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		var thread, run string
		_ = json.Unmarshal(body["threadId"], &thread)
		_ = json.Unmarshal(body["runId"], &run)
		return []string{fmt.Sprintf(`{"type":"RUN_STARTED","threadId":%q,"runId":%q}`, thread, run),
			`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":2}]}`,
			fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q}`, thread, run)}
	})
	c := New(nil)
	require.NoError(t, c.SetState(map[string]int{"count": 1}))
	require.NoError(t, c.AddMessages(UserMessage("count").WithID("u1"),
		mustMessage(t, `{"id":"x1","role":"activity","activityType":"PLAN","content":{}}`)))
	_, err := c.RunAgent(context.Background(), agent, &RunOptions{Tools: json.RawMessage(`[{"name":"f"}]`)})
	require.NoError(t, err)
	assert.Equal(t, `{"count":2}`, c.State().String(), "the delta applied to the state the agent was sent, not to {}")
	_, err = c.RunAgent(context.Background(), agent, nil)
	require.NoError(t, err)

	require.Len(t, bodies, 2)
	assert.Equal(t, `{"count":1}`, string(bodies[0]["state"]))
	assert.Equal(t, `{"count":2}`, string(bodies[1]["state"]), "state persists across runs")
	assert.Equal(t, `[{"id":"u1","role":"user","content":"count"}]`, string(bodies[0]["messages"]), "activity messages stay behind")
	assert.Equal(t, `[{"name":"f"}]`, string(bodies[0]["tools"]))
	assert.Equal(t, `[]`, string(bodies[1]["tools"]), "options are per run")
	assert.Equal(t, bodies[0]["threadId"], bodies[1]["threadId"], "one thread")
	assert.NotEqual(t, bodies[0]["runId"], bodies[1]["runId"], "a new run id each run")
	assert.Equal(t, `"`+c.ThreadID()+`"`, string(bodies[0]["threadId"]))
	assert.Equal(t, `"`+c.RunID()+`"`, string(bodies[1]["runId"]))
}

func mustMessage(t *testing.T, text string) Message {
	t.Helper()
	var m Message
	require.NoError(t, json.Unmarshal([]byte(text), &m))
	return m
}

// TestRunAgentInterrupts checks the reference client's rule: a run starts
// only when resume answers every pending interrupt, and nothing is sent
// otherwise.
func TestRunAgentInterrupts(t *testing.T) {
	t.Parallel()
	past, future := time.Now().Add(-time.Hour).Format(time.RFC3339), time.Now().Add(time.Hour).Format(time.RFC3339)
	interrupted := func(interrupts string) string {
		return `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":` + interrupts + `}}`
	}
	cases := []struct {
		name, reason string
		interrupts   string                  // pending after the first run
		answer       func(Value) (any, bool) // nil: no resume
		resume       string                  // a hand-written resume, when answer is nil
		wantErr      string                  // "" when the run starts
		wantResume   string                  // the resume sent
	}{
		{name: "unanswered", reason: "no resume while an interrupt is pending",
			interrupts: `[{"id":"i1","reason":"confirm"}]`,
			wantErr:    `interrupts are pending that resume does not answer: "i1"`},
		{name: "one of two answered", reason: "every interrupt must be answered",
			interrupts: `[{"id":"i1","reason":"a"},{"id":"i2","reason":"b"}]`,
			resume:     `[{"interruptId":"i1","status":"resolved"}]`,
			wantErr:    `does not answer: "i2"`},
		{name: "resolved", reason: "Resume answers each interrupt with its payload",
			interrupts: `[{"id":"i1","reason":"a"},{"id":"i2","reason":"b","expiresAt":"` + future + `"}]`,
			answer:     func(Value) (any, bool) { return json.RawMessage(`{"ok":true}`), true },
			wantResume: `[{"interruptId":"i1","status":"resolved","payload":{"ok":true}},{"interruptId":"i2","status":"resolved","payload":{"ok":true}}]`},
		{name: "cancelled", reason: "resolve false cancels",
			interrupts: `[{"id":"i1","reason":"a"}]`,
			answer:     func(Value) (any, bool) { return nil, false },
			wantResume: `[{"interruptId":"i1","status":"cancelled"}]`},
		{name: "resolved without payload", reason: "a nil payload is left out",
			interrupts: `[{"id":"i1","reason":"a"}]`,
			answer:     func(Value) (any, bool) { return nil, true },
			wantResume: `[{"interruptId":"i1","status":"resolved"}]`},
		{name: "expired resolved", reason: "an expired interrupt can only be cancelled",
			interrupts: `[{"id":"i1","reason":"a","expiresAt":"` + past + `"}]`,
			answer:     func(Value) (any, bool) { return "yes", true },
			wantErr:    `interrupt "i1" expired at ` + past},
		{name: "expired cancelled", reason: "cancelling an expired interrupt lets the thread go on",
			interrupts: `[{"id":"i1","reason":"a","expiresAt":"` + past + `"}]`,
			answer:     func(Value) (any, bool) { return nil, false },
			wantResume: `[{"interruptId":"i1","status":"cancelled"}]`},
		{name: "malformed resume", reason: "resume entries need an interruptId and a known status",
			interrupts: `[{"id":"i1","reason":"a"}]`,
			resume:     `[{"interruptId":"i1","status":"maybe"}]`,
			wantErr:    `"status" is "maybe", not "resolved" or "cancelled"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var sent []json.RawMessage
			var mu sync.Mutex
			agent, requests := scriptedAgent(t, func(body map[string]json.RawMessage, r *http.Request) []string {
				mu.Lock()
				defer mu.Unlock()
				sent = append(sent, body["resume"])
				if len(sent) == 1 {
					return []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, interrupted(tc.interrupts)}
				}
				return []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`}
			})
			c := New(nil)
			res, err := c.RunAgent(context.Background(), agent, nil)
			require.NoError(t, err)
			require.Equal(t, "interrupt", res.Outcome)

			opts := &RunOptions{}
			if tc.answer != nil {
				opts.Resume, err = c.Resume(tc.answer)
				require.NoError(t, err)
			} else if tc.resume != "" {
				opts.Resume = json.RawMessage(tc.resume)
			}
			before := snapshot(c)
			res, err = c.RunAgent(context.Background(), agent, opts)
			if tc.wantErr != "" {
				require.Error(t, err, tc.reason)
				assert.Contains(t, err.Error(), tc.wantErr, tc.reason)
				assert.Equal(t, int32(1), requests.Load(), "nothing is sent")
				assert.Equal(t, before, snapshot(c), "nothing changes")
				assert.NotEmpty(t, c.Interrupts(), "the interrupts stay pending")
				return
			}
			require.NoError(t, err, tc.reason)
			assert.Equal(t, "success", res.Outcome)
			assert.Nil(t, c.Interrupts(), "RUN_FINISHED cleared them")
			assert.Equal(t, tc.wantResume, string(sent[1]), tc.reason)
		})
	}
}

// TestRunAgentHeaders checks that the Agent's headers go on every request,
// that RunAgent's own Content-Type and Accept win, and that one Agent
// serves many threads at once.
func TestRunAgentHeaders(t *testing.T) {
	t.Parallel()
	agent, requests := scriptedAgent(t, func(body map[string]json.RawMessage, r *http.Request) []string {
		assert.Equal(t, "Bearer t0k", r.Header.Get("Authorization"))
		assert.Equal(t, []string{"a", "b"}, r.Header.Values("X-Tenant"))
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		assert.Equal(t, "text/event-stream", r.Header.Get("Accept"))
		var thread string
		_ = json.Unmarshal(body["threadId"], &thread)
		return []string{fmt.Sprintf(`{"type":"RUN_STARTED","threadId":%q,"runId":"r"}`, thread),
			fmt.Sprintf(`{"type":"STATE_SNAPSHOT","snapshot":%q}`, thread),
			fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":"r"}`, thread)}
	})
	agent.Header = http.Header{"Authorization": {"Bearer t0k"}, "X-Tenant": {"a", "b"}, "Accept": {"text/html"}, "Content-Type": {"text/plain"}}
	header := agent.Header.Clone()

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			c := New(nil)
			require.NoError(t, startRun(c, fmt.Sprintf(`{"threadId":"t%d"}`, i)))
			_, err := c.RunAgent(context.Background(), agent, nil)
			assert.NoError(t, err)
			assert.Equal(t, fmt.Sprintf(`"t%d"`, i), c.State().String(), "each thread gets its own run")
		})
	}
	wg.Wait()
	assert.Equal(t, int32(8), requests.Load())
	assert.Equal(t, header, agent.Header, "the Agent is not changed")
}

// TestAgentPost sends run inputs with Post, as a relay does: the input
// goes as it is, the per-request header replaces the Agent's fields of the
// same name, Content-Type and Accept are Post's own, and an answer that is
// no event stream is an *HTTPError.
func TestAgentPost(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	agent := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got.Store(r.Header.Clone())
		if string(body) == "fail" {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		serveEvents(w, "text/event-stream", sseChunks(string(body)))
	})
	a := &Agent{URL: agent.URL, Header: http.Header{"Authorization": {"Bearer relay"}, "X-Static": {"s"}, "Accept": {"text/html"}}}
	resp, err := a.Post(context.Background(), []byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
		http.Header{"authorization": {"Bearer user"}, "X-User": {"u"}, "Content-Type": {"text/plain"}})
	require.NoError(t, err)
	var events []string
	for text, err := range ReadEvents(resp.Body, nil) {
		require.NoError(t, err)
		events = append(events, string(text))
	}
	resp.Body.Close()
	assert.Equal(t, []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`}, events, "the input goes as it is")
	h := got.Load().(http.Header)
	assert.Equal(t, []string{"Bearer user"}, h.Values("Authorization"), "the request's header replaces the Agent's")
	assert.Equal(t, "s", h.Get("X-Static"))
	assert.Equal(t, "u", h.Get("X-User"))
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Equal(t, "text/event-stream", h.Get("Accept"))
	assert.Equal(t, http.Header{"Authorization": {"Bearer relay"}, "X-Static": {"s"}, "Accept": {"text/html"}}, a.Header, "the Agent is not changed")

	_, err = a.Post(context.Background(), []byte("fail"), nil)
	var he *HTTPError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.StatusInternalServerError, he.StatusCode)
	assert.Equal(t, "down\n", he.Body)

	_, err = (*Agent)(nil).Post(context.Background(), nil, nil)
	assert.ErrorContains(t, err, "nil *Agent")
}

// TestRunAgentRedirect checks that a run's POST is not followed to another
// origin, so that neither the headers nor the thread leave for it, unless
// the Agent allows it; and that a redirect within the origin is followed.
func TestRunAgentRedirect(t *testing.T) {
	t.Parallel()
	events := sseChunks(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"STATE_SNAPSHOT","snapshot":{"from":"elsewhere"}}`, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
	var otherHits atomic.Int32
	other := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		serveEvents(w, "text/event-stream", events)
	})
	origin := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/run", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/run", http.StatusPermanentRedirect)
		case "/run":
			body, _ := io.ReadAll(r.Body)
			assert.Contains(t, string(body), `"state":{"secret":1}`, "the POST body follows a 308 within the origin")
			assert.Equal(t, "Bearer t0k", r.Header.Get("Authorization"))
			serveEvents(w, "text/event-stream", events)
		}
	})
	run := func(path string, follow bool) (*Consumer, error) {
		c := New(nil)
		require.NoError(t, c.SetState(map[string]int{"secret": 1}))
		client := &http.Client{}
		agent := &Agent{URL: origin.URL + path, Header: http.Header{"Authorization": {"Bearer t0k"}}, Client: client, FollowCrossOrigin: follow}
		_, err := c.RunAgent(context.Background(), agent, nil)
		assert.Nil(t, client.CheckRedirect, "the caller's client is not changed")
		return c, err
	}

	c, err := run("/away", false)
	require.Error(t, err)
	assert.ErrorIs(t, err, errCrossOrigin)
	assert.Contains(t, err.Error(), "set Agent.FollowCrossOrigin")
	assert.Equal(t, int32(0), otherHits.Load(), "the other origin got nothing: no token, no state")
	assert.Equal(t, `{"secret":1}`, c.State().String(), "no event from the other origin")

	c, err = run("/moved", false)
	require.NoError(t, err, "a redirect within the origin is followed")
	assert.Equal(t, `{"from":"elsewhere"}`, c.State().String())

	_, err = run("/away", true)
	require.NoError(t, err, "FollowCrossOrigin allows it")
	assert.Equal(t, int32(1), otherHits.Load())
}

// TestSameOrigin checks the origin comparison of RFC 6454.
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"http://a.example/x", "http://a.example/y?q", true},
		{"http://a.example", "http://a.example:80", true},
		{"https://A.example", "https://a.example:443", true},
		{"http://a.example", "https://a.example", false},
		{"http://a.example:8080", "http://a.example:8081", false},
		{"http://a.example", "http://b.example", false},
		{"http://a.example", "http://sub.a.example", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		assert.Equal(t, tc.want, sameOrigin(a, b), "%s vs %s", tc.a, tc.b)
	}
}

// TestRunAgentUnsendable checks that a message that cannot be sent stops
// the run before anything is sent, where the old API wrote null.
func TestRunAgentUnsendable(t *testing.T) {
	t.Parallel()
	agent, requests := scriptedAgent(t, func(map[string]json.RawMessage, *http.Request) []string { return nil })
	c := New(nil)
	err := c.AddMessages(Message{})
	assert.ErrorContains(t, err, "the zero Message")
	_, err = c.RunAgent(context.Background(), agent, &RunOptions{Tools: json.RawMessage(`[`)})
	assert.ErrorContains(t, err, "RunAgentInput.tools")
	assert.Equal(t, int32(0), requests.Load())
	assert.Empty(t, c.RunID(), "no run started")
}

// TestRunAgentPositions checks that an error in a second run names the
// event by its place in the thread, as Event.Position says.
func TestRunAgentPositions(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	agent, _ := scriptedAgent(t, func(map[string]json.RawMessage, *http.Request) []string {
		evs := []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, `{"type":"CUSTOM","name":"x","value":1}`}
		if runs.Add(1) == 2 {
			evs = append(evs, `{"type":"STATE_DELTA","delta":{}}`)
		}
		return append(evs, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
	})
	c := New(nil)
	_, err := c.RunAgent(context.Background(), agent, nil)
	require.NoError(t, err)
	var positions []int
	c.Subscribe(func(ch Change) { positions = append(positions, ch.Event.Position) })
	_, err = c.RunAgent(context.Background(), agent, nil)
	var ee *EventError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 6, ee.Position, "three events of run 1, then the third of run 2")
	assert.Equal(t, []int{4, 5}, positions, "Changes count the same way")
}

// TestRunAgentThreadID checks RunOptions.ThreadID: it names a new thread,
// and one that disagrees with the thread's id is refused before anything
// is sent.
func TestRunAgentThreadID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, reason string
		held         string // the thread's id before the run, "" for none
		opt          string // RunOptions.ThreadID
		want         string // the threadId sent and held after; "" for a new UUID
		wantErr      error
	}{
		{"new thread", "the application names the thread of its first run", "", "chosen", "chosen", nil},
		{"same id", "restating the thread's id is no change", "t1", "t1", "t1", nil},
		{"no option", "the thread's own id goes on", "t1", "", "t1", nil},
		{"no id at all", "a new thread without an option gets a new UUID", "", "", "", nil},
		{"other id", "a Consumer holds one thread: another id is refused, nothing sent", "t1", "t2", "t1", ErrThreadMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var sent atomic.Value
			agent, requests := scriptedAgent(t, func(body map[string]json.RawMessage, _ *http.Request) []string {
				var thread, run string
				assert.NoError(t, json.Unmarshal(body["threadId"], &thread))
				assert.NoError(t, json.Unmarshal(body["runId"], &run))
				sent.Store(thread)
				ids := fmt.Sprintf(`"threadId":%q,"runId":%q`, thread, run)
				return []string{`{"type":"RUN_STARTED",` + ids + `}`, `{"type":"RUN_FINISHED",` + ids + `}`}
			})
			c := New(nil)
			if tc.held != "" {
				require.NoError(t, c.StartRun(RunAgentInput{ThreadID: tc.held, RunID: "r0"}))
			}
			opts := &RunOptions{ThreadID: tc.opt}
			next := c.NextInput(opts)
			_, err := c.RunAgent(context.Background(), agent, opts)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr, tc.reason)
				assert.Equal(t, int32(0), requests.Load(), "nothing sent")
				assert.Equal(t, "r0", c.RunID(), "no run started")
				assert.Equal(t, tc.held, next.ThreadID, "NextInput keeps the thread's id")
				assert.Equal(t, tc.held, c.ThreadID())
				return
			}
			require.NoError(t, err, tc.reason)
			want := tc.want
			if want == "" {
				want = sent.Load().(string)
				assert.Len(t, want, 36, "a new UUID")
			} else {
				assert.Equal(t, want, next.ThreadID, "NextInput says the same")
			}
			assert.Equal(t, want, sent.Load(), tc.reason)
			assert.Equal(t, want, c.ThreadID(), tc.reason)
		})
	}
}

// TestRunAgentOneAtATime checks that a second RunAgent or Follow on a
// Consumer that RunAgent is streaming into is refused with
// ErrRunInProgress before anything is sent, and that the Consumer takes
// runs again once the first returns, whatever Running says.
func TestRunAgentOneAtATime(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}, 4), make(chan struct{})
	var requests atomic.Int32
	srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		var in struct{ ThreadID, RunID string }
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&in))
		ids := fmt.Sprintf(`"threadId":%q,"runId":%q`, in.ThreadID, in.RunID)
		serveEvents(w, "text/event-stream", sseChunks(`{"type":"RUN_STARTED",`+ids+`}`))
		arrived <- struct{}{}
		if n == 1 {
			select { // the first run stalls until released
			case <-release:
			case <-r.Context().Done():
			}
		}
		serveEvents(w, "text/event-stream", sseChunks(`{"type":"RUN_FINISHED",`+ids+`}`))
	})
	agent := &Agent{URL: srv.URL, Client: srv.Client()}
	c := New(nil)

	first := make(chan error, 1)
	go func() {
		_, err := c.RunAgent(context.Background(), agent, nil)
		first <- err
	}()
	<-arrived // the first run is streaming
	_, err := c.RunAgent(context.Background(), agent, nil)
	assert.ErrorIs(t, err, ErrRunInProgress, "a second RunAgent is refused")
	_, err = c.Follow(context.Background(), agent, srv.URL)
	assert.ErrorIs(t, err, ErrRunInProgress, "so is a Follow")
	assert.Equal(t, int32(1), requests.Load(), "nothing sent for either")
	close(release)
	require.NoError(t, <-first, "the first run ends as it would alone")

	require.NoError(t, c.Apply([]byte(`{"type":"RUN_STARTED","threadId":"`+c.ThreadID()+`","runId":"applied"}`)))
	require.True(t, c.Running(), "a run that events started, with nothing streaming it")
	_, err = c.RunAgent(context.Background(), agent, nil)
	require.NoError(t, err, "does not stop RunAgent, whose RUN_STARTED ends it")
	<-arrived
	assert.Equal(t, int32(2), requests.Load())

	_, err = c.RunAgent(context.Background(), agent, &RunOptions{ThreadID: "other"})
	require.ErrorIs(t, err, ErrThreadMismatch)
	_, err = c.RunAgent(context.Background(), agent, nil)
	require.NoError(t, err, "a refused call releases the Consumer")
}

// TestRunAgentThreadMoved runs against an agent whose RUN_STARTED names
// another thread than the one the client runs: the run fails with an error
// naming the event, and the Consumer stays on its thread, which its next
// input carries. An agent used to move the client to its thread. A
// Consumer that has no thread yet (its id one RunAgent made up) takes the
// thread the agent names.
func TestRunAgentThreadMoved(t *testing.T) {
	t.Parallel()
	agent, _ := scriptedAgent(t, func(body map[string]json.RawMessage, r *http.Request) []string {
		return []string{`{"type":"RUN_STARTED","threadId":"theirs","runId":"r"}`, `{"type":"RUN_FINISHED","threadId":"theirs","runId":"r"}`}
	})
	tests := []struct {
		name, reason string
		start        func(c *Consumer) *RunOptions
		want         string // the thread after the run
		moved        bool   // the run is refused
	}{
		{name: "chosen", reason: "the caller names the thread", want: "mine", moved: true,
			start: func(c *Consumer) *RunOptions { return &RunOptions{ThreadID: "mine"} }},
		{name: "held", reason: "an earlier run named the thread", want: "mine", moved: true,
			start: func(c *Consumer) *RunOptions {
				require.NoError(t, c.Apply([]byte(`{"type":"RUN_STARTED","threadId":"mine","runId":"r0"}`)))
				require.NoError(t, c.Apply([]byte(`{"type":"RUN_FINISHED","threadId":"mine","runId":"r0"}`)))
				return nil
			}},
		{name: "none", reason: "a Consumer without a thread takes the agent's", want: "theirs",
			start: func(c *Consumer) *RunOptions { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(nil)
			opts := tt.start(c)
			_, err := c.RunAgent(context.Background(), agent, opts)
			assert.Equal(t, tt.want, c.ThreadID(), tt.reason)
			assert.Equal(t, tt.want, c.NextInput(nil).ThreadID, tt.reason)
			if !tt.moved {
				require.NoError(t, err, tt.reason)
				return
			}
			var ee *EventError
			require.ErrorAs(t, err, &ee, tt.reason)
			assert.ErrorIs(t, err, ErrMalformedEvent)
			assert.Equal(t, "RUN_STARTED", ee.Type)
			assert.Contains(t, err.Error(), `thread "theirs"`)
		})
	}
}
