// Tests of the chat command against httptest agents.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// request is what the agent got for one run.
type request struct {
	Header http.Header
	Body   map[string]json.RawMessage
}

// agent is an httptest agent that answers run i with the SSE events of
// runs[i] (the last one again past the end), and records the requests. The
// thread id "t" in the events becomes the one the run was sent.
type agent struct {
	*httptest.Server
	mu       sync.Mutex
	requests []request
}

func newAgent(t *testing.T, runs ...[]string) *agent {
	t.Helper()
	a := &agent{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]json.RawMessage
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		a.mu.Lock()
		a.requests = append(a.requests, request{r.Header.Clone(), body})
		i := min(len(a.requests), len(runs)) - 1
		a.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range runs[i] { // the run's events name the thread it was sent
			fmt.Fprintf(w, "data: %s\n\n", strings.ReplaceAll(ev, `"threadId":"t"`, `"threadId":`+string(body["threadId"])))
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *agent) got() []request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]request(nil), a.requests...)
}

const (
	started  = `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`
	finished = `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`
)

func text(id string, pieces ...string) []string {
	evs := []string{fmt.Sprintf(`{"type":"TEXT_MESSAGE_START","messageId":%q,"role":"assistant"}`, id)}
	for _, p := range pieces {
		evs = append(evs, fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":%q,"delta":%q}`, id, p))
	}
	return append(evs, fmt.Sprintf(`{"type":"TEXT_MESSAGE_END","messageId":%q}`, id))
}

func runOf(parts ...[]string) []string {
	out := []string{started}
	for _, p := range parts {
		out = append(out, p...)
	}
	return append(out, finished)
}

func interrupt(id string) string {
	return `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"` + id + `","reason":"confirm"}]}}`
}

func chatRun(t *testing.T, a *agent, stdin string, tty bool, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = run(append([]string{"-url", a.URL}, args...), strings.NewReader(stdin), &out, &errOut, tty)
	return status, out.String(), errOut.String()
}

func TestChat(t *testing.T) {
	cases := []struct {
		name, reason string
		runs         [][]string
		stdin        string
		args         []string
		wantStatus   int
		wantStdout   string
		wantStderr   string
		check        func(t *testing.T, reqs []request)
	}{{
		name:       "two turns",
		reason:     "each line is the user's next message; the thread goes on; blank lines are skipped",
		runs:       [][]string{runOf(text("a1", "Hel", "lo!")), runOf(text("a2", "Bye."))},
		stdin:      "hi\n\n   \nbye\n",
		wantStdout: "Hello!\nBye.\n",
		check: func(t *testing.T, reqs []request) {
			require.Len(t, reqs, 2)
			var msgs []map[string]any
			require.NoError(t, json.Unmarshal(reqs[1].Body["messages"], &msgs))
			require.Len(t, msgs, 3, "the second run sends the whole conversation")
			assert.Equal(t, []any{"user", "hi", "assistant", "Hello!", "user", "bye"},
				[]any{msgs[0]["role"], msgs[0]["content"], msgs[1]["role"], msgs[1]["content"], msgs[2]["role"], msgs[2]["content"]})
			assert.Equal(t, reqs[0].Body["threadId"], reqs[1].Body["threadId"], "one thread")
		},
	}, {
		name:   "tool calls and state",
		reason: "a tool call is shown when it ends, the chunk form at the run's end; each state change is one line; calls left unanswered fail the session",
		runs: [][]string{runOf(
			[]string{`{"type":"STATE_SNAPSHOT","snapshot":{"steps":[{"status":"pending"}]}}`},
			[]string{`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/steps/0/status","value":"done"}]}`},
			text("a1", "Let me check."),
			[]string{`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather","parentMessageId":"a1"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"city\":"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"\"Rome\"}"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
				`{"type":"TOOL_CALL_CHUNK","toolCallId":"c2","toolCallName":"search","parentMessageId":"a1","delta":"{}"}`},
		)},
		stdin: "weather?\n",
		wantStdout: "state: snapshot (32 bytes)\n" +
			"state: replace /steps/0/status = \"done\"\n" +
			"Let me check.\n" +
			"tool call: get_weather {\"city\":\"Rome\"}\n" +
			"tool call: search {}\n",
		wantStatus: 1,
		wantStderr: "error: the input ended with 2 tool calls unanswered\n",
	}, {
		name:   "a message that comes whole",
		reason: "a producer that streams no text: the messages its snapshot adds are printed at the end of the run",
		runs: [][]string{runOf([]string{`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a1","role":"assistant","content":"All done."}]}`}),
			runOf(text("a2", "Streamed."), []string{`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a3","role":"assistant","content":"Streamed."}]}`})},
		stdin:      "go\nagain\n",
		wantStdout: "All done.\nStreamed.\n",
	}, {
		name:       "chunks only",
		reason:     "a producer that sends only chunks: each message ends its line",
		runs:       [][]string{runOf([]string{`{"type":"TEXT_MESSAGE_CHUNK","messageId":"a1","delta":"One."}`, `{"type":"TEXT_MESSAGE_CHUNK","messageId":"a2","delta":"Two."}`})},
		stdin:      "go\n",
		wantStdout: "One.\nTwo.\n",
	}, {
		name:       "interrupt resolved with text",
		reason:     "interrupts go to stderr; the next line resolves each, as a JSON string when it is not JSON, and the run starts at once",
		runs:       [][]string{{started, interrupt("i1")}, runOf(text("a1", "Booked."))},
		stdin:      "book it\nyes please\n",
		wantStdout: "Booked.\n",
		wantStderr: `interrupt: {"id":"i1","reason":"confirm"}` + "\n",
		check: func(t *testing.T, reqs []request) {
			require.Len(t, reqs, 2)
			assert.Equal(t, `[{"interruptId":"i1","status":"resolved","payload":"yes please"}]`, string(reqs[1].Body["resume"]))
			assert.Contains(t, string(reqs[1].Body["messages"]), `"book it"`)
			assert.NotContains(t, string(reqs[1].Body["messages"]), `yes please`, "the answer is no user message")
		},
	}, {
		name:       "interrupt resolved with JSON",
		reason:     "a line that is JSON is the payload as it is",
		runs:       [][]string{{started, interrupt("i1")}, runOf()},
		stdin:      "go\n{\"approved\": true}\n",
		wantStderr: `interrupt: {"id":"i1","reason":"confirm"}` + "\n",
		check: func(t *testing.T, reqs []request) {
			assert.Equal(t, `[{"interruptId":"i1","status":"resolved","payload":{"approved":true}}]`, string(reqs[1].Body["resume"]))
		},
	}, {
		name:       "interrupt cancelled",
		reason:     "/cancel cancels every pending interrupt",
		runs:       [][]string{{started, interrupt("i1")}, runOf()},
		stdin:      "go\n/cancel\n",
		wantStderr: `interrupt: {"id":"i1","reason":"confirm"}` + "\n",
		check: func(t *testing.T, reqs []request) {
			assert.Equal(t, `[{"interruptId":"i1","status":"cancelled"}]`, string(reqs[1].Body["resume"]))
		},
	}, {
		name:       "interrupt left unanswered",
		reason:     "input that ends with interrupts pending did not finish the conversation",
		runs:       [][]string{{started, interrupt("i1")}},
		stdin:      "go\n",
		wantStatus: 1,
		wantStderr: `interrupt: {"id":"i1","reason":"confirm"}` + "\nerror: the input ended with 1 interrupts unanswered\n",
	}, {
		name:       "RUN_ERROR",
		reason:     "a failed run is reported with its code, the chat goes on, and the exit status is 1",
		runs:       [][]string{append(runOf(text("a1", "Partial"))[:5], `{"type":"RUN_ERROR","message":"model overloaded","code":"503"}`), runOf(text("a2", "Back."))},
		stdin:      "one\ntwo\n",
		wantStatus: 1,
		wantStdout: "Partial\nBack.\n",
		wantStderr: "error: run failed: model overloaded (code 503)\n",
		check:      func(t *testing.T, reqs []request) { assert.Len(t, reqs, 2, "the chat went on") },
	}, {
		name:       "fatal event",
		reason:     "a malformed event fails the run, and the chat goes on",
		runs:       [][]string{{started, `{"type":"STATE_DELTA","delta":{}}`, finished}, runOf()},
		stdin:      "one\ntwo\n",
		wantStatus: 1,
		wantStderr: "error: aguistate: event 2 (STATE_DELTA): malformed patch: ",
		check:      func(t *testing.T, reqs []request) { assert.Len(t, reqs, 2, "the chat went on") },
	}, {
		name:       "headers",
		reason:     "-H may repeat and goes on every run",
		runs:       [][]string{runOf()},
		stdin:      "a\nb\n",
		args:       []string{"-H", "Authorization: Bearer t0k", "-H", "X-Tenant: acme"},
		wantStdout: "",
		check: func(t *testing.T, reqs []request) {
			require.Len(t, reqs, 2)
			for _, r := range reqs {
				assert.Equal(t, "Bearer t0k", r.Header.Get("Authorization"))
				assert.Equal(t, "acme", r.Header.Get("X-Tenant"))
			}
		},
	}, {
		name:   "no input",
		reason: "an empty input runs nothing and succeeds",
		runs:   [][]string{runOf()},
		check:  func(t *testing.T, reqs []request) { assert.Empty(t, reqs) },
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newAgent(t, tc.runs...)
			status, stdout, stderr := chatRun(t, a, tc.stdin, false, tc.args...)
			assert.Equal(t, tc.wantStatus, status, "exit status; %s; stderr: %s", tc.reason, stderr)
			assert.Equal(t, tc.wantStdout, stdout, tc.reason)
			if strings.HasSuffix(tc.wantStderr, ": ") {
				assert.True(t, strings.HasPrefix(stderr, tc.wantStderr), "stderr %q; %s", stderr, tc.reason)
			} else {
				assert.Equal(t, tc.wantStderr, stderr, tc.reason)
			}
			if tc.check != nil {
				tc.check(t, a.got())
			}
		})
	}
}

// TestChatFailures checks that a transport or HTTP failure is reported and
// the chat goes on, and exits 1.
func TestChatFailures(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "agent is down", http.StatusBadGateway)
	}))
	defer down.Close()
	var out, errOut bytes.Buffer
	status := run([]string{"-url", down.URL}, strings.NewReader("a\nb\n"), &out, &errOut, false)
	assert.Equal(t, 1, status)
	assert.Equal(t, "error: aguistate: agent answered 502 Bad Gateway: agent is down\n"+
		"error: aguistate: agent answered 502 Bad Gateway: agent is down\n", errOut.String(), "each line is tried")

	errOut.Reset()
	status = run([]string{"-url", "http://127.0.0.1:1/nothing"}, strings.NewReader("a\n"), &out, &errOut, false)
	assert.Equal(t, 1, status)
	assert.Contains(t, errOut.String(), "error: aguistate: run request: ")
}

// TestChatStreams checks that the assistant's text is printed piece by
// piece as it arrives, not at the end: the agent sends its second piece
// only once the first is on standard output.
func TestChatStreams(t *testing.T) {
	t.Parallel()
	first := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{started, `{"type":"TEXT_MESSAGE_START","messageId":"a1"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"first "}`} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
		w.(http.Flusher).Flush()
		select {
		case <-first:
		case <-time.After(10 * time.Second):
			t.Error("the first piece was not printed before the run ended")
		}
		fmt.Fprintf(w, "data: %s\n\ndata: %s\n\n", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"second"}`, finished)
	}))
	defer srv.Close()
	stdout := &watch{want: "first ", seen: first}
	status := run([]string{"-url", srv.URL}, strings.NewReader("go\n"), stdout, io.Discard, false)
	assert.Equal(t, 0, status)
	assert.Equal(t, "first second\n", stdout.String())
}

// watch is a writer that closes seen once what was written contains want.
type watch struct {
	bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *watch) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// TestChatTerminal checks that the prompt and the waiting indicator appear
// on a terminal only.
func TestChatTerminal(t *testing.T) {
	t.Parallel()
	a := newAgent(t, runOf(text("a1", "Hi.")))
	status, stdout, stderr := chatRun(t, a, "hello\n", true)
	assert.Equal(t, 0, status)
	assert.Equal(t, "Hi.\n", stdout, "standard output is the same")
	assert.Equal(t, "> (waiting…)\r\033[K> ", stderr, "a prompt, the indicator erased at the first event, a prompt")

	status, _, stderr = chatRun(t, a, "hello\n", false)
	assert.Equal(t, 0, status)
	assert.Empty(t, stderr, "not a terminal: nothing but the output")
}

// TestChatInput checks -input: its thread, state and messages are the
// starting value, and its tools go with every run.
func TestChatInput(t *testing.T) {
	t.Parallel()
	input := filepath.Join(t.TempDir(), "input.json")
	require.NoError(t, os.WriteFile(input, []byte(`{"threadId":"t9","runId":"old","state":{"n":12345678901234567890},`+
		`"messages":[{"id":"s1","role":"system","content":"be brief"}],"tools":[{"name":"f"}],"forwardedProps":{"x":1}}`), 0o600))
	a := newAgent(t, runOf())
	status, _, stderr := chatRun(t, a, "a\nb\n", false, "-input", input)
	require.Equal(t, 0, status, stderr)
	reqs := a.got()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, `"t9"`, string(r.Body["threadId"]))
		assert.NotEqual(t, `"old"`, string(r.Body["runId"]), "each run is new")
		assert.Equal(t, `{"n":12345678901234567890}`, string(r.Body["state"]))
		assert.Equal(t, `[{"name":"f"}]`, string(r.Body["tools"]))
		assert.Equal(t, `{"x":1}`, string(r.Body["forwardedProps"]))
		assert.True(t, strings.HasPrefix(string(r.Body["messages"]), `[{"id":"s1","role":"system","content":"be brief"},`))
	}
}

func TestChatUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reason string
		args         []string
	}{
		{"no url", "-url is required", nil},
		{"extra argument", "the command takes no arguments", []string{"-url", "http://127.0.0.1:1", "x"}},
		{"bad header", "-H takes 'Name: value'", []string{"-url", "http://127.0.0.1:1", "-H", "nocolon"}},
		{"unreadable input", "a missing -input file", []string{"-url", "http://127.0.0.1:1", "-input", filepath.Join(t.TempDir(), "absent.json")}},
		{"bad flag", "unknown flags are usage errors", []string{"-nope"}},
		{"bad tool", "-tool takes NAME=COMMAND", []string{"-url", "http://127.0.0.1:1", "-tool", "f"}},
		{"a tool twice", "one command a tool", []string{"-url", "http://127.0.0.1:1", "-tool", "f=a", "-tool", "f=b"}},
	} {
		var stderr bytes.Buffer
		assert.Equal(t, 2, run(tc.args, strings.NewReader("hi\n"), io.Discard, &stderr, false), "%s: %s", tc.name, tc.reason)
		assert.NotEmpty(t, stderr.String(), tc.name)
	}
}

// TestChatTools checks -tool: a call of a tool with a -tool is answered by
// its command, and the turn goes on at once; a call of another tool by the
// next input line. The agent is the test kit's.
func TestChatTools(t *testing.T) {
	t.Parallel()
	srv := agenttest.NewFunc(t, func(in aguistate.RunAgentInput) agenttest.Turn {
		last := in.Messages[len(in.Messages)-1]
		switch {
		case last.Role() == "user" && last.Text() == "weather?":
			return agenttest.Turn{agenttest.Text("Let me check."), agenttest.ToolCall("get_weather", `{"city":"Rome"}`)}
		case last.Role() == "user":
			return agenttest.Turn{agenttest.ToolCall("confirm", `{"flight":"AA9"}`), agenttest.ToolCallChunks("get_weather", `{"city":"Oslo"}`)}
		case last.Role() == "tool":
			var results []string
			for _, m := range in.Messages {
				if m.Role() == "tool" {
					results = append(results, m.Text())
				}
			}
			return agenttest.Turn{agenttest.TextChunks("Got " + strings.Join(results, " and ") + ".")}
		}
		return nil
	})
	command := `-tool=get_weather=read args; echo "{\"sky\":\"clear\",\"args\":$args}"`

	var out, errOut bytes.Buffer
	status := run([]string{"-url", srv.URL, command}, strings.NewReader("weather?\n"), &out, &errOut, false)
	assert.Equal(t, 0, status, errOut.String())
	assert.Equal(t, "Let me check.\n"+
		`tool call: get_weather {"city":"Rome"}`+"\n"+
		`tool result: get_weather {"sky":"clear","args":{"city":"Rome"}}`+"\n"+
		`Got {"sky":"clear","args":{"city":"Rome"}}.`+"\n", out.String(), "the command answers, and the turn goes on at once")
	in := srv.Inputs()
	require.Len(t, in, 2)
	assert.JSONEq(t, `[{"name":"get_weather","description":""}]`, string(in[0].Tools), "the tool's definition goes in the run input")

	out.Reset()
	errOut.Reset()
	status = run([]string{"-url", srv.URL, command}, strings.NewReader("book it\nyes\n"), &out, &errOut, true)
	assert.Equal(t, 0, status, errOut.String())
	assert.Equal(t, `tool call: confirm {"flight":"AA9"}`+"\n"+
		`tool call: get_weather {"city":"Oslo"}`+"\n"+
		`tool result: get_weather {"sky":"clear","args":{"city":"Oslo"}}`+"\n"+
		`Got {"sky":"clear","args":{"city":"Oslo"}} and yes.`+"\n", out.String(),
		"the call with a command is answered; the other waits for the next line, and then the turn goes on")
	assert.Contains(t, errOut.String(), "confirm> ", "the prompt names the call that waits")
}

// TestChatToolFails checks that a -tool command that fails is reported,
// fails the session, and the chat goes on.
func TestChatToolFails(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(t, agenttest.Turn{agenttest.ToolCall("f", `{}`)}, agenttest.Turn{agenttest.Text("Fine.")})
	var out, errOut bytes.Buffer
	status := run([]string{"-url", srv.URL, "-tool", "f=echo broken >&2; exit 3"}, strings.NewReader("go\nagain\n"), &out, &errOut, false)
	assert.Equal(t, 1, status)
	assert.Equal(t, "broken\n"+`error: aguistate: tool "f" (call "call-1"): -tool f: exit status 3`+"\n", errOut.String())
	assert.Equal(t, "tool call: f {}\nFine.\n", out.String(), "the next line is the user's, and the chat goes on")
}

// TestChatToolDefinedInInput checks that a -tool that -input defines
// keeps -input's definition.
func TestChatToolDefinedInInput(t *testing.T) {
	t.Parallel()
	input := filepath.Join(t.TempDir(), "input.json")
	require.NoError(t, os.WriteFile(input, []byte(`{"tools":[{"name":"f","description":"Does f.","parameters":{"type":"object"}}]}`), 0o600))
	srv := agenttest.New(t, agenttest.Turn{})
	status, _, stderr := chatRun(t, &agent{Server: srv.Server}, "go\n", false, "-input", input, "-tool", "f=cat")
	require.Equal(t, 0, status, stderr)
	assert.JSONEq(t, `[{"name":"f","description":"Does f.","parameters":{"type":"object"}}]`, string(srv.Inputs()[0].Tools))
}
