// Tests of Checkpoint and Restore: every stream cut at every event boundary,
// what a checkpoint keeps, what Restore refuses, FuzzRestore.

package aguistate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamEvents reads every event of a stream file, copied.
func streamEvents(t testing.TB, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var events [][]byte
	for text, err := range ReadEvents(f, nil) {
		require.NoError(t, err)
		events = append(events, append([]byte(nil), text...))
	}
	return events
}

// applyAll applies events until the first fatal error, and returns how
// many it applied.
func applyAll(c *Consumer, events [][]byte) int {
	for i, ev := range events {
		if c.Apply(ev) != nil {
			return i
		}
	}
	return len(events)
}

// TestCheckpointCut cuts every stream, shared and bundled, at every event
// boundary: a Consumer restored from a checkpoint taken there and given the
// rest of the stream must end byte for byte where an uninterrupted one ends.
func TestCheckpointCut(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{sharedDir(t, "streams"), filepath.Join("testdata", "streams")} {
		var found []string
		for _, pattern := range []string{"*.sse", "*.jsonl", "*.events.json"} {
			m, err := filepath.Glob(filepath.Join(dir, pattern))
			require.NoError(t, err)
			found = append(found, m...)
		}
		require.NotEmpty(t, found, "%s holds streams", dir)
		files = append(files, found...)
	}
	cuts := 0
	for _, file := range files {
		events := streamEvents(t, file)
		require.NotEmpty(t, events, "%s has events to cut between", file)
		input, _ := os.ReadFile(strings.TrimSuffix(strings.TrimSuffix(file, filepath.Ext(file)), ".events") + ".input.json")
		start := func() *Consumer {
			c := New(nil)
			if input != nil {
				require.NoError(t, startRun(c, string(input)))
			}
			return c
		}
		whole := start()
		applied := applyAll(whole, events)
		want := string(whole.Checkpoint())
		for k := 0; k <= applied; k++ { // a fatal event ends the stream
			first := start()
			applyAll(first, events[:k])
			cp := first.Checkpoint()
			restored, err := Restore(cp, nil)
			require.NoError(t, err, "%s cut at %d", file, k)
			require.Equal(t, string(cp), string(restored.Checkpoint()), "%s: a checkpoint round-trips exactly", file)
			applyAll(restored, events[k:])
			assert.Equal(t, want, string(restored.Checkpoint()), "%s cut at %d", filepath.Base(file), k)
			cuts++
		}
	}
	t.Logf("%d streams, %d cuts", len(files), cuts)
}

// TestCheckpointKeepsEverything checks a checkpoint of a Consumer holding
// every kind of state: exact numbers, member order, divergence, interrupts,
// an open chunk stream.
func TestCheckpointKeepsEverything(t *testing.T) {
	t.Parallel()
	c := New(nil)
	for _, ev := range []string{
		`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`,
		`{"type":"STATE_SNAPSHOT","snapshot":{"z":12345678901234567890,"a":0.10,"m":1e2}}`,
		`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/missing"}]}`,
		`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"assistant","delta":"Hel"}`,
		`{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"approve","x":1.50}]}}`,
		`{"type":"RUN_STARTED","threadId":"t1","runId":"r2"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","delta":"open"}`,
	} {
		require.NoError(t, c.Apply([]byte(ev)))
	}
	r, err := Restore(c.Checkpoint(), nil)
	require.NoError(t, err)
	assert.Equal(t, `{"z":12345678901234567890,"a":0.10,"m":1e2}`, r.State().String())
	assert.True(t, r.Diverged())
	require.Len(t, r.Interrupts(), 1)
	assert.Equal(t, `{"id":"i1","reason":"approve","x":1.50}`, r.Interrupts()[0].String())
	assert.Equal(t, "t1", r.NextInput(nil).ThreadID)
	require.NoError(t, r.Apply([]byte(`{"type":"TEXT_MESSAGE_CHUNK","delta":"!"}`)), "the open chunk stream continues")
	assert.Equal(t, `[{"id":"m1","role":"assistant","content":"Hel"},{"id":"m2","role":"assistant","content":"open!"}]`,
		valueOf(encodeMessages(r.Messages())).String())
	err = r.Apply([]byte(`{"type":"STATE_DELTA"}`))
	var ee *EventError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 9, ee.Position, "event positions go on from the checkpoint")
}

// TestCheckpointKeepsScopes checks that a checkpoint keeps what a prelude
// opens again: the run's steps, reasoning spans and subagents, a construct
// that a chunk stream opened, the events that ended the run, the SSE id.
func TestCheckpointKeepsScopes(t *testing.T) {
	t.Parallel()
	c := New(nil)
	for _, ev := range []string{
		`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`,
		`{"type":"SUBAGENT_STARTED","subagentRunId":"s1","name":"researcher"}`,
		`{"type":"SUBAGENT_STARTED","subagentRunId":"s2","name":"writer","parentSubagentRunId":"s1"}`,
		`{"type":"SUBAGENT_FINISHED","subagentRunId":"s2"}`,
		`{"type":"STEP_STARTED","stepName":"plan"}`,
		`{"type":"STEP_STARTED","stepName":"plan","subagentRunId":"s1"}`,
		`{"type":"STEP_STARTED","stepName":"done"}`,
		`{"type":"STEP_FINISHED","stepName":"done"}`,
		`{"type":"REASONING_START","messageId":"r1","subagentRunId":"s1"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hel"}`,
		`{"type":"STATE_SNAPSHOT","snapshot":{}}`,
	} {
		require.NoError(t, c.Apply([]byte(ev)))
	}
	v := c.cur.Load()
	require.Equal(t, 2, v.steps.Len(), "a step is per subagent; a finished one closes")
	require.Equal(t, 1, v.spans.Len())
	require.Equal(t, 2, v.subagents.Len())
	s2, _ := v.subagents.get("s2")
	assert.True(t, s2.done)
	require.Equal(t, 1, v.open.Len())
	m1, _ := v.open.get(constructKey(textConstruct, "m1"))
	assert.True(t, m1.chunked, "a chunk opened it; its stream has closed")
	assert.Empty(t, v.chunks)

	r, err := Restore(c.Checkpoint(), nil)
	require.NoError(t, err)
	assert.Equal(t, string(c.Checkpoint()), string(r.Checkpoint()))
	assert.Contains(t, string(r.Checkpoint()), `"chunked":true`)

	for _, ev := range []string{
		`{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"interrupt","interrupts":[{"id":"i1"}]}}`,
		`{"type":"RUN_ERROR","message":"late","code":"X"}`,
	} {
		require.NoError(t, r.Apply([]byte(ev)))
	}
	v = r.cur.Load()
	assert.Empty(t, v.steps, "a run's end closes its scopes")
	assert.Empty(t, v.spans)
	assert.Empty(t, v.subagents)
	require.Len(t, v.ends, 2, "RUN_FINISHED, then RUN_ERROR")
	again, err := Restore(r.Checkpoint(), nil)
	require.NoError(t, err)
	assert.Equal(t, string(r.Checkpoint()), string(again.Checkpoint()))
	require.NoError(t, again.Apply([]byte(`{"type":"RUN_STARTED","threadId":"t1","runId":"r2"}`)))
	assert.Empty(t, again.cur.Load().ends, "a new run has not ended")
}

func TestRestoreRejects(t *testing.T) {
	t.Parallel()
	good := string(New(nil).Checkpoint())
	with := func(members string) string { return strings.TrimSuffix(good, "}") + "," + members + "}" }
	ended := func(phase, members string) string {
		return strings.Replace(with(members), `"run":"none"`, phase, 1)
	}
	tests := []struct {
		name, checkpoint string
		reason           string
	}{
		{"not JSON", `{`, "invalid JSON"},
		{"not an object", `[]`, "a checkpoint is an object"},
		{"other format", strings.Replace(good, checkpointVersion, "aguistate-checkpoint/9", 1), "unknown version"},
		{"no state", strings.Replace(good, `"state":{},`, ``, 1), "state is required"},
		{"negative events", strings.Replace(good, `"events":0`, `"events":-1`, 1), "a count"},
		{"duplicate ids", strings.Replace(good, `"messages":[]`, `"messages":[{"id":"a","role":"user"},{"id":"a","role":"user"}]`, 1), "ids are unique"},
		{"bad chunk", strings.Replace(good, `"chunks":[]`, `"chunks":[{"lane":"","kind":"NOPE","id":"m"}]`, 1), "unknown chunk kind"},
		{"huge events", strings.Replace(good, `"events":0`, `"events":9223372036854775807`, 1), "a count a Consumer can reach"},
		{"negative zero events", strings.Replace(good, `"events":0`, `"events":-0`, 1), "written as Checkpoint writes it"},
		{"unknown run phase", strings.Replace(good, `"run":"none"`, `"run":"over"`, 1), "the run lifecycle has four phases"},
		{"interrupt not an object", strings.Replace(good, `"interrupts":[]`, `"interrupts":[1]`, 1), "interrupts are objects"},
		{"interrupt without an id", strings.Replace(good, `"interrupts":[]`, `"interrupts":[{"reason":"x"}]`, 1), "no stream makes an interrupt without an id pending"},
		{"two streams in a lane", strings.Replace(good, `"chunks":[]`, `"chunks":[{"lane":"","kind":"TEXT_MESSAGE_CHUNK","id":"m"},{"lane":"","kind":"TOOL_CALL_CHUNK","id":"t"}]`, 1), "one open stream per lane"},
		{"empty chunk id", strings.Replace(good, `"chunks":[]`, `"chunks":[{"lane":"","kind":"TEXT_MESSAGE_CHUNK","id":""}]`, 1), "ids are not empty"},
		{"step after the run ended", ended(`"run":"finished"`, `"steps":[{"name":"s"}]`), "RUN_FINISHED closes every step"},
		{"step open twice", with(`"steps":[{"name":"s"},{"name":"s"}]`), "a step open twice is one step"},
		{"empty span id", with(`"spans":[{"messageId":""}]`), "ids are not empty"},
		{"subagent not started", with(`"subagents":[{"event":{"type":"SUBAGENT_FINISHED","subagentRunId":"s"},"done":true}]`), "a subagent is kept by its SUBAGENT_STARTED"},
		{"subagent without an id", with(`"subagents":[{"event":{"type":"SUBAGENT_STARTED"},"done":false}]`), "only a started subagent with an id is kept"},
		{"ends of an active run", ended(`"run":"started"`, `"ends":[{"type":"RUN_ERROR","message":"x"}]`), "an active run has not ended"},
		{"ends out of order", ended(`"run":"error"`, `"ends":[{"type":"RUN_ERROR","message":"x"},{"type":"RUN_FINISHED","threadId":"t","runId":"r"}]`), "RUN_ERROR may follow RUN_FINISHED, not precede it"},
		{"end without its message", ended(`"run":"error"`, `"ends":[{"type":"RUN_ERROR"}]`), "a RUN_ERROR has a message"},
		{"event id not a string", with(`"eventId":5`), "an SSE id is text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Restore([]byte(tt.checkpoint), nil)
			assert.ErrorIs(t, err, errBadCheckpoint, tt.reason)
		})
	}
	_, err := Restore([]byte(with(`"steps":[{"name":"s"},{"name":"s","subagentRunId":"a"}]`)), nil)
	assert.NoError(t, err, "a step name is per subagent, as the reference client verifies it")
	_, err = Restore([]byte(strings.Replace(good, `"state":{}`, `"state":"`+strings.Repeat("x", 100)+`"`, 1)), &Options{MaxStateSize: 50})
	assert.ErrorIs(t, err, ErrLimit, "a restored Consumer obeys its limits")
	lanes := `"chunks":[{"lane":"a","kind":"TEXT_MESSAGE_CHUNK","role":"assistant","id":"m"},{"lane":"b","kind":"TOOL_CALL_CHUNK","name":"f","id":"t"}]`
	_, err = Restore([]byte(strings.Replace(good, `"chunks":[]`, lanes, 1)), &Options{MaxChunkLanes: 1})
	assert.ErrorIs(t, err, ErrLimit, "MaxChunkLanes bounds the lanes a checkpoint opens")
	_, err = Restore([]byte(strings.Replace(good, `"chunks":[]`, lanes, 1)), &Options{MaxChunkLanes: 2})
	assert.NoError(t, err, "at the limit")
	deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	_, err = Restore([]byte(strings.Replace(good, `"state":{}`, `"state":`+deep, 1)), nil)
	assert.ErrorIs(t, err, ErrLimit, "too deep is a limit, as for events")
}

// TestRestoreScopeSize checks that MaxScopeSize bounds a restored run's
// steps, reasoning spans and subagents as it bounds an event's: each is
// counted as the bytes of its entry in the checkpoint, and Restore accepts
// a checkpoint at the limit and refuses one a byte over it.
func TestRestoreScopeSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []string
		reason string
	}{
		{"steps", []string{`{"type":"STEP_STARTED","stepName":"plan"}`, `{"type":"STEP_STARTED","stepName":"plan","subagentRunId":"a"}`,
			`{"type":"STEP_STARTED","stepName":""}`}, "a step is per subagent; an empty name costs its entry"},
		{"spans with escapes", []string{`{"type":"REASONING_START","messageId":"r\n\u00e9\"","subagentRunId":"a\u0001"}`},
			"an id counts as written, escapes and all"},
		{"subagents", []string{`{"type":"SUBAGENT_STARTED","subagentRunId":"a","name":"n","rawEvent":{"x":[1,2,3]}}`,
			`{"type":"SUBAGENT_STARTED","subagentRunId":"b","name":"m"}`, `{"type":"SUBAGENT_FINISHED","subagentRunId":"b"}`},
			"a subagent counts its SUBAGENT_STARTED, ended or not"},
		{"all three", []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, `{"type":"STEP_STARTED","stepName":"s"}`,
			`{"type":"REASONING_START","messageId":"r"}`, `{"type":"SUBAGENT_STARTED","subagentRunId":"a","name":"n"}`}, "they share one limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(nil)
			for _, ev := range tt.events {
				require.NoError(t, c.Apply([]byte(ev)))
			}
			cp := c.Checkpoint()
			n, err := jsonv.Parse(cp, 100)
			require.NoError(t, err)
			size := 0
			for _, member := range []string{"steps", "spans", "subagents"} {
				if list := n.Get(member); list != nil {
					for _, e := range list.All() {
						size += e.Size()
					}
				}
			}
			require.Equal(t, size, c.cur.Load().scopeSize(), "the entries' bytes in the checkpoint: %s", tt.reason)

			r, err := Restore(cp, &Options{MaxScopeSize: size})
			require.NoError(t, err, "at the limit: %s", tt.reason)
			assert.Equal(t, string(cp), string(r.Checkpoint()))
			_, err = Restore(cp, &Options{MaxScopeSize: size - 1})
			require.ErrorIs(t, err, ErrLimit, "a byte over it: %s", tt.reason)
			assert.Contains(t, err.Error(), "MaxScopeSize")
		})
	}
}

// FuzzRestore feeds arbitrary data to Restore: it never panics, fails only
// with errBadCheckpoint or ErrLimit, and what it accepts checkpoints to a
// fixed point.
func FuzzRestore(f *testing.F) {
	c := New(nil)
	for _, ev := range []string{
		`{"type":"STATE_SNAPSHOT","snapshot":{"a":[1,2.50]}}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u","role":"user","content":"x"}]}`,
		`{"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f","parentMessageId":"p","delta":"{"}`,
		`{"type":"SUBAGENT_STARTED","subagentRunId":"s","name":"n"}`,
		`{"type":"STEP_STARTED","stepName":"s","subagentRunId":"s"}`,
		`{"type":"REASONING_START","messageId":"r"}`,
		`{"type":"RUN_ERROR","message":"m"}`,
	} {
		f.Add(c.Checkpoint())
		_ = c.Apply([]byte(ev))
	}
	f.Add(c.Checkpoint())
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Restore(data, &Options{MaxStateSize: 1 << 16})
		if err != nil {
			if !errors.Is(err, errBadCheckpoint) && !errors.Is(err, ErrLimit) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		cp := r.Checkpoint()
		again, err := Restore(cp, nil)
		if err != nil {
			t.Fatalf("a checkpoint does not restore: %v\n%s", err, cp)
		}
		if got := again.Checkpoint(); string(got) != string(cp) {
			t.Fatalf("not a fixed point:\n%s\n%s", cp, got)
		}
	})
}
