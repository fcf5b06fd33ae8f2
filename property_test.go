// Property tests over recorded and generated event sequences: a skipped
// event keeps its promise (issue 8, kind 4), and what the Consumer holds it
// can read back (kind 3).

package aguistate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// propertyOptions are the options of the generated sequences: a small
// MaxDepth that the deepening events reach, and a ValidateState that
// refuses a state with a member "bad".
func propertyOptions() *Options {
	return &Options{MaxDepth: 5, ValidateState: func(s Value) error {
		if s.node().Kind() == jsonv.Object && s.node().Get("bad") != nil {
			return errors.New("bad state")
		}
		return nil
	}}
}

// genEvents returns n events drawn from r: every event type, over a few
// ids that collide on purpose (a message and a tool call named alike, ids
// of every role), so that replays, ends, wrong roles and lifecycle errors
// are frequent.
func genEvents(r *rand.Rand, n int) []string { return genEventsOf(r, n, false) }

// genEventsOf is genEvents, with the events of pre-1.0 producers when
// legacy is true.
func genEventsOf(r *rand.Rand, n int, legacy bool) []string {
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	opt := func(member, value string) string { // sometimes a member
		if r.IntN(2) == 0 {
			return ""
		}
		return `,"` + member + `":` + value
	}
	msg := func() string { return pick(`"m1"`, `"m2"`, `"r1"`, `"u1"`, `"a1"`, `"act"`, `"t1"`, `"c1"`) }
	call := func() string { return pick(`"c1"`, `"c2"`, `"a1"`, `"u1"`) }
	run := func() string { return pick(`"r1"`, `"r2"`) }
	sub := func() string { return opt("subagentRunId", pick(`"s1"`, `"s2"`)) }
	held := []string{
		`{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}]}`,
		`{"id":"a1","role":"assistant","content":"x","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
		`{"id":"t1","toolCallId":"c1","role":"tool","content":"r"}`,
		`{"id":"r1","role":"reasoning","content":""}`,
		`{"id":"act","role":"activity","activityType":"p","content":{"p":1}}`,
		`{"id":"m1","role":"assistant","content":"y"}`,
	}
	snapshot := func() string {
		var ms []string
		for _, m := range held {
			if r.IntN(2) == 0 {
				ms = append(ms, m)
			}
		}
		return "[" + strings.Join(ms, ",") + "]"
	}
	gens := []func() string{
		func() string {
			return `{"type":"RUN_STARTED","threadId":"t","runId":` + run() + opt("input", `{"state":`+pick(`{"a":{}}`, `{"bad":1}`)+`,"messages":[`+held[0]+`]}`) + `}`
		},
		func() string {
			return `{"type":"RUN_FINISHED","threadId":"t","runId":` + run() + opt("outcome", `{"type":"interrupt","interrupts":[{"id":"i1","x":{"y":{}}}]}`) + `}`
		},
		func() string { return `{"type":"RUN_ERROR","message":"boom"}` },
		func() string {
			return `{"type":"STATE_SNAPSHOT","snapshot":` + pick(`{"a":{}}`, `{"a":[1,2.50]}`, `{"bad":true}`, `null`) + sub() + `}`
		},
		func() string {
			return `{"type":"STATE_DELTA","delta":[` + pick(`{"op":"copy","from":"/a","path":"/a/a"}`, `{"op":"remove","path":"/missing"}`,
				`{"op":"add","path":"/n","value":1.0}`, `{"op":"add","path":"/bad","value":1}`, `{"op":"test","path":"/n","value":1}`) + `]` + sub() + `}`
		},
		func() string { return `{"type":"MESSAGES_SNAPSHOT","messages":` + snapshot() + `}` },
		func() string {
			return `{"type":"TEXT_MESSAGE_START","messageId":` + msg() + opt("role", pick(`"user"`, `"assistant"`)) + sub() + opt("metadata", `{"k":1}`) + `}`
		},
		func() string {
			return `{"type":"TEXT_MESSAGE_CONTENT","messageId":` + msg() + `,"delta":"t"` + sub() + `}`
		},
		func() string { return `{"type":"TEXT_MESSAGE_END","messageId":` + msg() + sub() + `}` },
		func() string {
			return `{"type":"REASONING_MESSAGE_START","messageId":` + msg() + `,"role":"reasoning"}`
		},
		func() string { return `{"type":"REASONING_MESSAGE_CONTENT","messageId":` + msg() + `,"delta":"r"}` },
		func() string { return `{"type":"REASONING_MESSAGE_END","messageId":` + msg() + `}` },
		func() string {
			return `{"type":"TOOL_CALL_START","toolCallId":` + call() + `,"toolCallName":"f"` + opt("parentMessageId", msg()) + sub() + `}`
		},
		func() string { return `{"type":"TOOL_CALL_ARGS","toolCallId":` + call() + `,"delta":"{"}` },
		func() string { return `{"type":"TOOL_CALL_END","toolCallId":` + call() + `}` },
		func() string {
			return `{"type":"TOOL_CALL_RESULT","messageId":` + pick(`"t1"`, `"t2"`, `"u1"`) + `,"toolCallId":` + call() + `,"content":"ok"}`
		},
		func() string {
			return `{"type":"ACTIVITY_SNAPSHOT","messageId":` + msg() + `,"activityType":"p","content":{"p":2}` + opt("replace", pick("true", "false")) + `}`
		},
		func() string {
			return `{"type":"ACTIVITY_DELTA","messageId":` + msg() + `,"activityType":"p","patch":[` +
				pick(`{"op":"add","path":"/d","value":{"d":{}}}`, `{"op":"replace","path":"","value":[]}`, `{"op":"remove","path":"/nope"}`, `{"op":"copy","from":"","path":"/p"}`) + `]}`
		},
		func() string {
			return `{"type":"REASONING_ENCRYPTED_VALUE","subtype":` + pick(`"message"`, `"tool-call"`) + `,"entityId":` + msg() + `,"encryptedValue":"E"}`
		},
		func() string {
			return `{"type":"TEXT_MESSAGE_CHUNK"` + opt("messageId", msg()) + opt("role", pick(`"user"`, `"assistant"`)) + sub() + opt("delta", `"c"`) + `}`
		},
		func() string {
			return `{"type":"TOOL_CALL_CHUNK"` + opt("toolCallId", call()) + opt("toolCallName", `"f"`) + opt("parentMessageId", msg()) + sub() + opt("delta", `"}"`) + `}`
		},
		func() string {
			return `{"type":"REASONING_MESSAGE_CHUNK"` + opt("messageId", msg()) + sub() + opt("delta", `"x"`) + `}`
		},
		func() string {
			return pick(`{"type":"CUSTOM","name":"n","value":1`, `{"type":"STEP_STARTED","stepName":"s"`, `{"type":"RAW","event":{}`,
				`{"type":"SUBAGENT_FINISHED"`, `{"type":"SOMETHING_NEW"`) + sub() + `}`
		},
	}
	if legacy {
		gens = append(gens, func() string { // a pre-1.0 producer's
			return pick(`{"type":"THINKING_START","title":"t"`, `{"type":"THINKING_END"`, `{"type":"THINKING_TEXT_MESSAGE_START"`,
				`{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"h"`, `{"type":"THINKING_TEXT_MESSAGE_END"`,
				`{"type":"REASONING_MESSAGE_START","role":"assistant","messageId":`+msg()) + sub() + `}`
		})
	}
	events := make([]string, n)
	for i := range events {
		events[i] = gens[r.IntN(len(gens))]()
	}
	return events
}

// genLegacyEvents is genEvents with the events of pre-1.0 producers too:
// THINKING_* events, and REASONING_MESSAGE_START with the role
// "assistant".
func genLegacyEvents(r *rand.Rand, n int) []string { return genEventsOf(r, n, true) }

// checkSkippedPromise applies ev to c. When the event is skipped it checks
// the promise of Consumer.Apply: nothing changes but the count of events,
// the chunk streams (those that an event of its type closes; a chunk event
// may open or continue its own), and the diverged flag (set by a failed
// STATE_DELTA or a refused state); a RUN_STARTED whose input's state was
// refused starts its run without it. It returns whether ev was skipped.
func checkSkippedPromise(t testing.TB, c *Consumer, ev string) bool {
	t.Helper()
	before := *c.cur.Load()
	var ch Change
	cancel := c.Subscribe(func(got Change) { ch = got })
	err := c.Apply([]byte(ev))
	cancel()
	if err != nil || ch.Warning == nil || !skipped(ch.Warning) {
		return false // an event of another protocol version applies, with a warning
	}
	after := *c.cur.Load()
	typ := ch.Event.Type
	if typ == "RUN_STARTED" {
		if !errors.Is(ch.Warning, ErrStateRejected) || !jsonv.Equal(after.state, before.state) || !after.diverged {
			t.Fatalf("a skipped RUN_STARTED keeps the state and marks it diverged: %s\n%v", ev, ch.Warning)
		}
		return true
	}
	if ch.StateChanged || ch.MessagesChanged() {
		t.Fatalf("a skipped event reported a change: %s\n%+v", ev, ch)
	}
	if after.events != before.events+1 {
		t.Fatalf("a skipped event counts once: %d then %d", before.events, after.events)
	}
	if after.diverged != before.diverged && !(after.diverged && (typ == "STATE_DELTA" || errors.Is(ch.Warning, ErrStateRejected))) {
		t.Fatalf("only a failed STATE_DELTA or a refused state marks the state diverged: %s", ev)
	}
	if chunkKindOf(typ) == 0 {
		framing := c.begin(&before)
		n, _ := jsonv.Parse([]byte(ev), 0)
		if err := framing.closeChunks(eventTypes[typ].chunks, n); err != nil {
			t.Fatalf("closing the chunk streams of an applied event: %v", err)
		}
		if fmt.Sprint(framing.next.chunks) != fmt.Sprint(after.chunks) {
			t.Fatalf("a skipped %s changed the chunk streams otherwise than closing them:\nbefore %v\nafter  %v", typ, before.chunks, after.chunks)
		}
	}
	rest := after
	rest.events, rest.chunks, rest.diverged = before.events, before.chunks, before.diverged
	if got, want := string(rest.checkpoint()), string(before.checkpoint()); got != want {
		t.Fatalf("a skipped event changed the Consumer: %s\n%v\nbefore %s\nafter  %s", ev, ch.Warning, want, got)
	}
	return true
}

// checkReadBack checks that what c holds it can read back under its own
// options: Restore(Checkpoint()), StartRun(NextInput()), State() re-sent as
// a STATE_SNAPSHOT and Messages() as a MESSAGES_SNAPSHOT all succeed and
// change nothing but what they are for (a run input ends divergence and
// names a new run; a snapshot ends divergence). After a run has ended, the
// snapshots are re-sent in a new run. Messages without an id (only a run
// input has them) cannot be re-sent in a snapshot.
func checkReadBack(t testing.TB, c *Consumer, opts *Options, where string) {
	t.Helper()
	cp := c.Checkpoint()
	restore := func() *Consumer {
		r, err := Restore(cp, opts)
		if err != nil {
			t.Fatalf("%s: Restore(Checkpoint()): %v\n%s", where, err, cp)
		}
		return r
	}
	if got := restore().Checkpoint(); string(got) != string(cp) {
		t.Fatalf("%s: Restore(Checkpoint()) changed it:\n%s\n%s", where, cp, got)
	}
	held := c.cur.Load().owned()
	same := func(what string, r *Consumer, ignore func(v *view)) {
		t.Helper()
		v, w := r.cur.Load().owned(), held.owned()
		if ignore != nil {
			ignore(&v)
			ignore(&w)
		}
		v.events, w.events = 0, 0
		if got, want := string(v.checkpoint()), string(w.checkpoint()); got != want {
			t.Fatalf("%s: %s changed the Consumer:\nbefore %s\nafter  %s", where, what, want, got)
		}
	}

	r := restore()
	resume, err := r.Resume(func(Value) (any, bool) { return nil, false }) // cancel every pending interrupt
	if err != nil {
		t.Fatalf("%s: Resume: %v", where, err)
	}
	input, err := json.Marshal(r.NextInput(&RunOptions{Resume: resume}))
	if err != nil {
		t.Fatalf("%s: NextInput: %v", where, err)
	}
	if err := startRun(r, string(input)); err != nil {
		t.Fatalf("%s: StartRun(NextInput()): %v", where, err)
	}
	same("StartRun(NextInput())", r, func(v *view) {
		v.diverged, v.runID = false, ""
		if held.threadID == "" {
			v.threadID = ""
		}
	})

	resend := func(what, ev string, ignore func(v *view)) {
		t.Helper()
		r := restore()
		if v := r.cur.Load(); v.run == runFinished || v.run == runFailed {
			thread := v.threadID // a Consumer holds one thread
			if thread == "" {
				thread = "t"
			}
			start := append(jsonv.AppendString([]byte(`{"type":"RUN_STARTED","threadId":`), thread), `,"runId":"read-back"}`...)
			if err := r.Apply(start); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			held.run, held.threadID, held.runID, held.ends, held.thinking, held.calls = runActive, thread, "read-back", nil, thinkingIDs{}, keyedSet[runCall]{}
		}
		if err := r.Apply([]byte(ev)); err != nil {
			t.Fatalf("%s: %s: %v", where, what, err)
		}
		same(what, r, func(v *view) {
			v.chunks = nil
			ignore(v)
		})
		held = c.cur.Load().owned()
	}
	state, _ := json.Marshal(c.State())
	resend("State() as a STATE_SNAPSHOT", `{"type":"STATE_SNAPSHOT","snapshot":`+string(state)+`}`, func(v *view) { v.diverged = false })
	for _, m := range c.Messages() {
		if m.ID() == "" {
			return
		}
	}
	messages, _ := json.Marshal(append([]Message{}, c.Messages()...))
	resend("Messages() as a MESSAGES_SNAPSHOT", `{"type":"MESSAGES_SNAPSHOT","messages":`+string(messages)+`}`, func(*view) {})
}

// propertyIterations is how many generated sequences each property test
// runs; -short runs fewer.
func propertyIterations() int {
	if testing.Short() {
		return 100
	}
	return 500
}

// TestSkippedEventsChangeNothing checks the promise of a skipped event
// against every handler, over generated sequences.
func TestSkippedEventsChangeNothing(t *testing.T) {
	t.Parallel()
	skipped, applied := 0, 0
	for seed := range uint64(propertyIterations()) {
		r := rand.New(rand.NewPCG(seed, 8))
		c := New(propertyOptions())
		for _, ev := range genLegacyEvents(r, 60) {
			applied++
			if checkSkippedPromise(t, c, ev) {
				skipped++
			}
		}
	}
	t.Logf("%d generated events, %d skipped and checked", applied, skipped)
	if skipped < applied/10 {
		t.Fatalf("only %d of %d events were skipped: the generator no longer exercises the promise", skipped, applied)
	}
}

// TestReadBack checks that every Consumer reads back what it holds: after
// every event of every recorded stream, and after every tenth event of
// generated sequences.
func TestReadBack(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{sharedDir(t, "streams"), filepath.Join("testdata", "streams")} {
		for _, pattern := range []string{"*.sse", "*.jsonl", "*.events.json"} {
			m, err := filepath.Glob(filepath.Join(dir, pattern))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, m...)
		}
	}
	checks := 0
	for _, file := range files {
		c := New(nil)
		if input, err := os.ReadFile(strings.TrimSuffix(strings.TrimSuffix(file, filepath.Ext(file)), ".events") + ".input.json"); err == nil {
			if err := startRun(c, string(input)); err != nil {
				t.Fatal(err)
			}
		}
		for i, ev := range streamEvents(t, file) {
			if c.Apply(ev) != nil {
				break
			}
			checkReadBack(t, c, nil, fmt.Sprintf("%s after event %d", filepath.Base(file), i+1))
			checks++
		}
	}
	for seed := range uint64(propertyIterations()) {
		r := rand.New(rand.NewPCG(seed, 3))
		opts := propertyOptions()
		c := New(opts)
		for i, ev := range genLegacyEvents(r, 60) {
			_ = c.Apply([]byte(ev))
			if i%10 == 9 {
				checkReadBack(t, c, opts, fmt.Sprintf("seed %d after event %d", seed, i+1))
				checks++
			}
		}
	}
	t.Logf("%d recorded streams; %d Consumers read back", len(files), checks)
}

// FuzzProperties runs both properties over sequences generated from the
// fuzzer's seed.
func FuzzProperties(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(60))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, n uint8) {
		r := rand.New(rand.NewPCG(s1, s2))
		opts := propertyOptions()
		c := New(opts)
		for _, ev := range genLegacyEvents(r, int(n)) {
			checkSkippedPromise(t, c, ev)
		}
		checkReadBack(t, c, opts, "the end")
	})
}
