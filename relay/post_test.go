// Tests of POST /agent: the new-run rule, a resume that reaches the agent, and a run input
// checked before the agent is called.

package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// interrupting is the script of an agent that keys a paused run by its
// run id, as the official AG-UI Go example server does: a run without
// resume entries proposes a tool call and ends with an interrupt; a run
// with resume entries and the paused run's id goes on and finishes; a
// resume of any other run fails.
func interrupting(input []byte) [][]byte {
	var in struct {
		ThreadID, RunID string
		Resume          []json.RawMessage
	}
	_ = json.Unmarshal(input, &in)
	ids := fmt.Sprintf(`"threadId":%q,"runId":%q`, in.ThreadID, in.RunID)
	switch {
	case len(in.Resume) == 0:
		return [][]byte{
			[]byte(`{"type":"RUN_STARTED",` + ids + `}`),
			[]byte(`{"type":"TOOL_CALL_START","toolCallId":"call1","toolCallName":"file_read"}`),
			[]byte(`{"type":"TOOL_CALL_END","toolCallId":"call1"}`),
			[]byte(`{"type":"RUN_FINISHED",` + ids + `,"outcome":{"type":"interrupt","interrupts":[{"id":"call1","reason":"tool_call"}]}}`),
		}
	case in.RunID == "r1":
		return [][]byte{
			[]byte(`{"type":"RUN_STARTED",` + ids + `}`),
			[]byte(`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`),
			[]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"read complete"}`),
			[]byte(`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`),
			[]byte(`{"type":"RUN_FINISHED",` + ids + `,"outcome":{"type":"success"}}`),
		}
	}
	return [][]byte{
		[]byte(`{"type":"RUN_STARTED",` + ids + `}`),
		[]byte(`{"type":"RUN_ERROR","message":"cannot resume: no paused run found for this thread/run"}`),
	}
}

// resumeThroughRelay runs an interrupt and its resume through the relay at
// agentURL (its /agent route), as a Go client does: the resume reuses the
// interrupted run's id. It returns the client's results.
func resumeThroughRelay(t *testing.T, agentURL, runID string) (first, second aguistate.RunResult, c *aguistate.Consumer) {
	agent := &aguistate.Agent{URL: agentURL, Reconnects: 3}
	c = aguistate.New(nil)
	require.NoError(t, c.StartRun(aguistate.RunAgentInput{ThreadID: "t-" + runID}))
	require.NoError(t, c.AddMessages(aguistate.UserMessage("read x").WithID("u1")))
	first, err := c.RunAgent(testContext(t), agent, &aguistate.RunOptions{RunID: runID})
	require.NoError(t, err)
	require.Equal(t, "interrupt", first.Outcome)
	require.Len(t, first.Interrupts, 1)
	resume, err := c.Resume(func(aguistate.Value) (any, bool) { return map[string]bool{"approved": true}, true })
	require.NoError(t, err)
	second, err = c.RunAgent(testContext(t), agent, &aguistate.RunOptions{RunID: runID, Resume: resume})
	require.NoError(t, err)
	return first, second, c
}

// TestRelayResume resumes an interrupt with the interrupted run's id, as
// the official AG-UI Go example server needs: the resume reaches the agent
// and works as it does direct, where it used to be served from the log
// (the interrupted run again).
func TestRelayResume(t *testing.T) {
	t.Parallel()
	a := agenttest.NewScript(t, interrupting)
	store := relay.NewMemory(nil)
	_, base := newRelay(t, a, relay.Options{Store: store})
	_, second, c := resumeThroughRelay(t, base+"/agent", "r1")
	assert.Equal(t, "success", second.Outcome)
	assert.Len(t, a.Inputs(), 2, "the resume reached the agent")
	assert.Contains(t, string(a.Inputs()[1]), `"resume":[`)
	text, _ := c.Message("m1")
	assert.Equal(t, "read complete", text.Text())
	assert.Equal(t, []string{"RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_END", "RUN_FINISHED",
		"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"}, logTypes(t, store, "t-r1"))
}

// TestRelayNewRunRule sends POSTs after a run of thread t (runId r1, user
// message u1): only one that can be nothing but a reconnect of r1 is
// served from the log; any other reaches the agent.
func TestRelayNewRunRule(t *testing.T) {
	t.Parallel()
	const u1 = `{"id":"u1","role":"user","content":"hi"}`
	const u2 = `{"id":"u2","role":"user","content":"again"}`
	tests := []struct {
		name, reason string
		input        string
		header       []string
		reconnect    bool
	}{
		{"reconnect", "the last run's id and a Last-Event-ID", `{"threadId":"t","runId":"r1","messages":[` + u1 + `]}`,
			[]string{"Last-Event-ID", "1"}, true},
		{"retry", "the last run's id, and only messages the thread holds", `{"threadId":"t","runId":"r1","messages":[` + u1 + `]}`,
			nil, true},
		{"reconnect before an event", "an empty Last-Event-ID, as RunAgent sends when no event came", `{"threadId":"t","runId":"r1","messages":[` + u1 + `,` + u2 + `]}`,
			[]string{"Last-Event-ID", ""}, true},
		{"new run id", "a stale Last-Event-ID does not make a new run a reconnect", `{"threadId":"t","runId":"r2","messages":[` + u1 + `,` + u2 + `]}`,
			[]string{"Last-Event-ID", "1"}, false},
		{"new message", "the last run's id with a message the thread does not hold", `{"threadId":"t","runId":"r1","messages":[` + u1 + `,` + u2 + `]}`,
			nil, false},
		{"resume", "resume entries", `{"threadId":"t","runId":"r1","messages":[` + u1 + `],"resume":[{"interruptId":"i","status":"cancelled"}]}`,
			nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := agenttest.NewScript(t, func(input []byte) [][]byte {
				var in struct{ RunID string }
				_ = json.Unmarshal(input, &in)
				return [][]byte{
					[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"` + in.RunID + `"}`),
					[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"` + in.RunID + `"}`),
				}
			})
			store := relay.NewMemory(nil)
			_, base := newRelay(t, a, relay.Options{Store: store})
			status, _ := post(t, base, []byte(`{"threadId":"t","runId":"r1","messages":[`+u1+`]}`))
			require.Equal(t, http.StatusOK, status)

			status, _, body := send(t, http.MethodPost, base+"/agent", "", []byte(tt.input), tt.header...)
			require.Equal(t, http.StatusOK, status, body)
			if tt.reconnect {
				assert.Len(t, a.Inputs(), 1, "%s: served from the log", tt.reason)
				assert.Len(t, logTypes(t, store, "t"), 2)
				return
			}
			assert.Len(t, a.Inputs(), 2, "%s: a new run", tt.reason)
			assert.Len(t, logTypes(t, store, "t"), 4)
			if strings.Contains(tt.input, "u2") {
				code, thread := getThread(t, base, "t")
				require.Equal(t, http.StatusOK, code)
				assert.Contains(t, thread, `"u2"`, "%s: the new message is recorded", tt.reason)
			}
		})
	}
}

// TestRelayRecordChecked POSTs run inputs whose record the thread would
// refuse: the client gets 413 with the limit named, and the agent is never
// called (it used to run, and the relay then refused its own record).
func TestRelayRecordChecked(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2048)
	tests := []struct {
		name, input, limit string
	}{
		{"state", `{"threadId":"t","runId":"r","messages":[],"state":{"big":"` + big + `"}}`, "its STATE_SNAPSHOT: limit exceeded: the event is"},
		{"message", `{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"` + big + `"}]}`, "its RUN_STARTED: limit exceeded: the event is"},
		{"deep state", `{"threadId":"t","runId":"r","messages":[],"state":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`, "nest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := newAgent(t, [][]byte{[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)})
			store := relay.NewMemory(nil)
			_, base := newRelay(t, a, relay.Options{Store: store, Consumer: &aguistate.Options{MaxEventSize: 1024, MaxDepth: 10}})
			status, _, body := send(t, http.MethodPost, base+"/agent", "", []byte(tt.input))
			assert.Equal(t, http.StatusRequestEntityTooLarge, status)
			assert.Contains(t, body, "the run input cannot be recorded")
			assert.Contains(t, body, tt.limit)
			assert.Empty(t, a.Inputs(), "the agent is not called")
			assert.Empty(t, logTypes(t, store, "t"))
		})
	}
}

// TestRelayResumeGoExample runs an interrupt and its resume through the
// relay in front of the official AG-UI Go example server, and direct: they
// end alike, the resume reaching the server, which keys the paused run by
// its run id. Set AGUISTATE_GOEX_AGENT to the URL of the server's /agentic
// route, served with a scripted model (docs/server.md, "The relay's edge",
// says how); without it the test skips.
func TestRelayResumeGoExample(t *testing.T) {
	agentURL := os.Getenv("AGUISTATE_GOEX_AGENT")
	if agentURL == "" {
		t.Skip("AGUISTATE_GOEX_AGENT is not set: no official Go example server to run against")
	}
	base := serve(t, relay.New(&aguistate.Agent{URL: agentURL}, nil))
	run := fmt.Sprintf("r-%d", time.Now().UnixNano())
	_, viaRelay, c := resumeThroughRelay(t, base+"/agent", run+"-relay")
	_, direct, d := resumeThroughRelay(t, agentURL, run+"-direct")
	assert.Equal(t, "success", direct.Outcome)
	assert.Equal(t, direct.Outcome, viaRelay.Outcome, "the resume reached the server through the relay")
	texts := func(c *aguistate.Consumer) []string {
		var out []string
		for _, m := range c.Messages() {
			out = append(out, m.Role()+": "+m.Text())
		}
		return out
	}
	assert.Equal(t, texts(d), texts(c), "the thread through the relay is the thread direct")
	assert.Equal(t, d.State().String(), c.State().String())
}

// TestRelayReconnectAgentRunID runs an agent that names its run otherwise
// than the input's runId: a client that reconnects with the body it sent
// and a Last-Event-ID (as Consumer.RunAgent does) reconnects to that run,
// while it goes on and once it has ended (from the log, on a relay that
// no longer holds the thread), and the agent is not called again. Such a
// POST used to be a new run: 409 while the run went on, a second run of
// the agent after it.
func TestRelayReconnectAgentRunID(t *testing.T) {
	t.Parallel()
	a := agenttest.NewScript(t, agenttest.Echo([][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"agents-run"}`),
		[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"n":1}}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"agents-run"}`),
	}))
	release := a.Hold(1)
	store := relay.NewMemory(nil)
	_, base := newRelay(t, a, relay.Options{Store: store})
	input := []byte(`{"threadId":"t","runId":"clients-run","messages":[]}`)
	first := openSSE(t, http.MethodPost, base+"/agent", input, "", 1)
	<-first.first

	again := openSSE(t, http.MethodPost, base+"/agent", input, "1", 2)
	release()
	assert.Equal(t, []string{"STATE_SNAPSHOT", "RUN_FINISHED"}, typesOf(t, dataOf(again.wait(t))), "the reconnect while the run goes on")
	first.wait(t)

	_, otherBase := newRelay(t, a, relay.Options{Store: store}) // holds nothing of the thread
	status, events := postWith(t, otherBase, input, "1")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, []string{"STATE_SNAPSHOT", "RUN_FINISHED"}, typesOf(t, dataOf(events)), "the reconnect after the run, from the log")
	assert.Len(t, a.Inputs(), 1, "the agent ran once")
}

// postWith sends a run input to POST /agent with Last-Event-ID lastID, and
// returns the status and the events.
func postWith(t testing.TB, base string, input []byte, lastID string) (int, []sseEvent) {
	t.Helper()
	return sendSSE(t, http.MethodPost, base+"/agent", input, lastID)
}

// TestRelayInputTotals runs a thread up to the Consumer's totals, then
// POSTs a run whose input would take it past them: the relay answers 413
// naming the limit, before the agent is called. It used to call the agent,
// and then could not record the run.
func TestRelayInputTotals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		opts         aguistate.Options
		limit        string
	}{
		{"messages", "the thread holds MaxMessages", aguistate.Options{MaxMessages: 2}, "MaxMessages"},
		{"size", "the thread's messages near MaxTotalMessageSize", aguistate.Options{MaxTotalMessageSize: 300}, "MaxTotalMessageSize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := agenttest.NewScript(t, agenttest.Echo([][]byte{
				[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
				[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
			}))
			opts := tt.opts
			_, base := newRelay(t, a, relay.Options{Consumer: &opts})
			text := strings.Repeat("x", 100)
			status, _ := post(t, base, []byte(`{"threadId":"t","runId":"r1","messages":[`+
				`{"id":"u1","role":"user","content":"`+text+`"},{"id":"u2","role":"user","content":"`+text+`"}]}`))
			require.Equal(t, http.StatusOK, status, "within the totals")
			status, _, body := send(t, http.MethodPost, base+"/agent", "", []byte(`{"threadId":"t","runId":"r2","messages":[`+
				`{"id":"u1","role":"user","content":"`+text+`"},{"id":"u2","role":"user","content":"`+text+`"},`+
				`{"id":"u3","role":"user","content":"`+text+`"}]}`))
			assert.Equal(t, http.StatusRequestEntityTooLarge, status, "%s: %s", tt.reason, body)
			assert.Contains(t, body, tt.limit)
			assert.Len(t, a.Inputs(), 1, "the agent is not called")
		})
	}
}

// leaseCounter is a store that counts the calls of Lease.
type leaseCounter struct {
	relay.Store
	leases atomic.Int64
}

func (s *leaseCounter) Lease(ctx context.Context, thread, holder, run string, ttl time.Duration) error {
	s.leases.Add(1)
	return s.Store.Lease(ctx, thread, holder, run, ttl)
}

// TestRelayConflictNotRecorded posts a run to relay B while relay A holds
// the thread for a run whose agent has not answered (nothing recorded):
// B cannot tell it from a run whose end is recorded and whose lease is
// about to go, and asks again, but with a pause that doubles, so that the
// POST's 409 costs a few store calls (it made 96 at a fixed 20 ms).
func TestRelayConflictNotRecorded(t *testing.T) {
	t.Parallel()
	a := agenttest.NewScript(t, agenttest.Echo([][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
	}))
	release := a.Hold(0)
	defer release()
	mem := relay.NewMemory(nil)
	counted := &leaseCounter{Store: mem}
	_, baseA := newRelay(t, a, relay.Options{Store: mem})
	_, baseB := newRelay(t, a, relay.Options{Store: counted})
	first := openSSE(t, http.MethodPost, baseA+"/agent", []byte(`{"threadId":"t","runId":"r1","messages":[]}`), "", 1)
	waitFor(t, "the agent called", func() bool { return len(a.Inputs()) == 1 })
	status, _, body := send(t, http.MethodPost, baseB+"/agent", "", []byte(`{"threadId":"t","runId":"r2","messages":[]}`))
	assert.Equal(t, http.StatusConflict, status, body)
	assert.LessOrEqual(t, counted.leases.Load(), int64(10), "Lease calls of the refused POST")
	release()
	first.wait(t)
}

// TestRelayReconnectSeveralRuns runs an agent whose answer holds two runs,
// each named otherwise than the input's runId, the second's RUN_STARTED
// without an "input" (the relay records only the first's): a client that
// reconnects with the body it sent and a Last-Event-ID, from a relay that
// holds nothing of the thread, gets the rest of the answer from the log,
// and the agent is not called again. The second RUN_STARTED, which is no
// record, used to hide the first: the reconnect was a new run, and the
// agent ran twice (hostile review).
func TestRelayReconnectSeveralRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		lastID       string
		types        []string
	}{
		{"after run 1", "the second run", "2", []string{"RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"}},
		{"in run 2", "the rest of the second run", "3", []string{"STATE_SNAPSHOT", "RUN_FINISHED"}},
		{"in run 1", "the rest of the first run (reconnects go run by run)", "1", []string{"RUN_FINISHED"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newAgent(t, [][]byte{
				[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"a1"}`),
				[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"a1"}`),
				[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"a2"}`),
				[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"n":2}}`),
				[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"a2"}`),
			})
			store := relay.NewMemory(nil)
			_, base := newRelay(t, a, relay.Options{Store: store})
			input := []byte(`{"threadId":"t","runId":"clients-run","messages":[]}`)
			status, events := post(t, base, input)
			require.Equal(t, http.StatusOK, status)
			require.Len(t, events, 5)

			_, otherBase := newRelay(t, a, relay.Options{Store: store}) // holds nothing of the thread
			status, events = postWith(t, otherBase, input, tc.lastID)
			assert.Equal(t, http.StatusOK, status)
			assert.Equal(t, tc.types, typesOf(t, dataOf(events)), tc.reason)
			assert.Len(t, a.Inputs(), 1, "the agent ran once")
		})
	}
}

// gatedLease is a store whose Lease waits for gate to close once held is
// closed (ready), so that a test holds a POST between its read of the
// thread and its lease.
type gatedLease struct {
	relay.Store
	held chan struct{} // closed when a Lease waits
	gate chan struct{} // closed to let it go on
	once sync.Once
}

func (s *gatedLease) Lease(ctx context.Context, thread, holder, run string, ttl time.Duration) error {
	s.once.Do(func() {
		close(s.held)
		<-s.gate
	})
	return s.Store.Lease(ctx, thread, holder, run, ttl)
}

// TestRelayDuplicatePost sends the same run input twice, to two relays of
// one store, as a client's retry does: the second POST reads the thread
// before the first's run, which then runs and ends on the other relay
// while the second takes the lease. The second is a reconnect of that run
// (its runId, no new message) and gets its events from the log; the agent
// runs once. It used to start a second run of the agent with the same
// runId, once it had the lease (hostile review).
func TestRelayDuplicatePost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		lastID       string
		types        []string
	}{
		{"no Last-Event-ID", "a retry of the body it sent: the prelude", "",
			[]string{"RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"}},
		{"Last-Event-ID 0", "a reconnect from the start: the log", "0",
			[]string{"RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := agenttest.NewScript(t, agenttest.Echo([][]byte{
				[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
				[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"n":1}}`),
				[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
			}))
			store := relay.NewMemory(nil)
			gated := &gatedLease{Store: store, held: make(chan struct{}), gate: make(chan struct{})}
			_, first := newRelay(t, a, relay.Options{Store: store})
			_, second := newRelay(t, a, relay.Options{Store: gated})
			input := []byte(`{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}]}`)
			type answer struct {
				status int
				events []sseEvent
			}
			late := make(chan answer, 1)
			go func() {
				status, events := sendSSE(t, http.MethodPost, second+"/agent", input, tc.lastID)
				late <- answer{status, events}
			}()
			<-gated.held
			status, events := post(t, first, input)
			require.Equal(t, http.StatusOK, status)
			require.Len(t, events, 3)
			close(gated.gate)
			got := <-late
			assert.Equal(t, http.StatusOK, got.status, tc.reason)
			assert.Equal(t, tc.types, typesOf(t, dataOf(got.events)), tc.reason)
			assert.Len(t, a.Inputs(), 1, "the agent ran once")
		})
	}
}

// TestRelayForgedRecord runs an agent whose answer holds a second run
// whose RUN_STARTED carries an "input" of its own making, with a runId
// that no client sent: the log keeps that "input" as it is, and the relay
// takes it for its record of the run's start, so a POST of that runId with
// a Last-Event-ID is served from the log as a reconnect and never reaches
// the agent. Skipped: hostile review finding "an agent's later RUN_STARTED
// forges the relay's record"; the fix (the relay writes its own record in
// every RUN_STARTED of the answer, or marks its record) is the lead's call.
func TestRelayForgedRecord(t *testing.T) {
	t.Skip("hostile review: an agent's later RUN_STARTED forges the relay's record (see the doc comment)")
	t.Parallel()
	a := newAgent(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"a1"}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"a1"}`),
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"a2","input":{"threadId":"t","runId":"forged","messages":[]}}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"a2"}`),
	})
	store := relay.NewMemory(nil)
	_, base := newRelay(t, a, relay.Options{Store: store})
	status, _ := post(t, base, []byte(`{"threadId":"t","runId":"clients-run","messages":[]}`))
	require.Equal(t, http.StatusOK, status)
	_, otherBase := newRelay(t, a, relay.Options{Store: store})
	status, _ = postWith(t, otherBase, []byte(`{"threadId":"t","runId":"forged","messages":[]}`), "2")
	assert.Equal(t, http.StatusOK, status)
	assert.Len(t, a.Inputs(), 2, "a runId that no client sent is a new run")
}
