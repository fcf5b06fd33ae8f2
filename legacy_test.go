// Tests of pre-1.0 producers: THINKING_* events read as REASONING_* ones,
// and the reasoning-role rule.

package aguistate

import (
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aguistate/aguistate/internal/oracle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// thinkingStream is a pre-1.0 producer's run: a reasoning span holding a
// reasoning message, then an answer.
var thinkingStream = []string{
	`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`,
	`{"type":"THINKING_START","title":"plan"}`,
	`{"type":"THINKING_TEXT_MESSAGE_START","timestamp":7}`,
	`{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"Rome is "}`,
	`{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"warm."}`,
	`{"type":"THINKING_TEXT_MESSAGE_END"}`,
	`{"type":"THINKING_END"}`,
	`{"type":"TEXT_MESSAGE_START","messageId":"a1","role":"assistant"}`,
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"Pack light."}`,
	`{"type":"TEXT_MESSAGE_END","messageId":"a1"}`,
	`{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`,
}

func TestThinking(t *testing.T) {
	t.Parallel()
	c := New(nil)
	var changes []Change
	c.Subscribe(func(ch Change) { changes = append(changes, ch) })
	for _, ev := range thinkingStream {
		require.NoError(t, c.Apply([]byte(ev)))
	}
	id := mintID("t1", 3)
	assert.Equal(t, `[{"id":"`+id+`","role":"reasoning","content":"Rome is warm."},{"id":"a1","role":"assistant","content":"Pack light."}]`,
		messagesJSON(c), "the reasoning message has the id made for its start, and its text")
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, id, "a UUID, version 8")
	assert.NotEqual(t, mintID("t1", 2), id, "each event its own id")
	assert.NotEqual(t, mintID("t2", 3), id, "each thread its own ids")
	for i, ch := range changes {
		if i < 1 || i > 6 {
			assert.NoError(t, ch.Warning, "event %d", i+1)
			continue
		}
		require.Error(t, ch.Warning, "event %d: each conversion is a warning", i+1)
		assert.ErrorIs(t, ch.Warning, ErrProtocolVersion)
		assert.False(t, skipped(ch.Warning), "the event applies")
		assertArticles(t, ch.Warning)
	}
	assert.Contains(t, changes[1].Warning.Error(), `title "plan" is dropped`)
	assert.Equal(t, []Piece{{MessageID: id, Role: "reasoning", Start: true}}, changes[2].Pieces)
	assert.Equal(t, []Piece{{MessageID: id, Role: "reasoning", Text: "warm."}}, changes[4].Pieces)
	assert.Equal(t, []Piece{{MessageID: id, Role: "reasoning", End: true}}, changes[5].Pieces)
	assert.Equal(t, "THINKING_TEXT_MESSAGE_START", changes[2].Event.Type, "a Change carries the event as received")
}

// TestThinkingEdges checks continuations with no opener, spans, and what
// RUN_STARTED forgets.
func TestThinkingEdges(t *testing.T) {
	t.Parallel()
	runEventCases(t, []eventCase{
		{name: "content with no start", events: []string{
			`{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"x"}`,
		}, want: `[]`, warn: []error{ErrNoTarget}, warnText: []string{"no opener came before it"},
			reason: "a new id names nothing open: skipped with ErrNoTarget too, where the reference client's verification rejects the run"},
		{name: "end with no start", events: []string{
			`{"type":"THINKING_TEXT_MESSAGE_END"}`, `{"type":"THINKING_END"}`,
		}, want: `[]`, warn: []error{ErrNoTarget, ErrProtocolVersion}, reason: "an end of nothing: the message's is skipped, the span's changes nothing"},
		{name: "two messages", events: []string{
			`{"type":"THINKING_TEXT_MESSAGE_START"}`, `{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"a"}`, `{"type":"THINKING_TEXT_MESSAGE_END"}`,
			`{"type":"THINKING_TEXT_MESSAGE_START"}`, `{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"b"}`,
		}, want: `[{"id":"` + mintID("", 1) + `","role":"reasoning","content":"a"},{"id":"` + mintID("", 4) + `","role":"reasoning","content":"b"}]`,
			warn: []error{ErrProtocolVersion, ErrProtocolVersion, ErrProtocolVersion, ErrProtocolVersion, ErrProtocolVersion}, reason: "each start opens a message of its own"},
		{name: "a run boundary", events: []string{
			`{"type":"THINKING_TEXT_MESSAGE_START"}`,
			`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
			`{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"late"}`,
		}, want: `[{"id":"` + mintID("", 1) + `","role":"reasoning","content":""}]`, warn: []error{ErrProtocolVersion, ErrNoTarget},
			reason: "RUN_STARTED forgets what THINKING_* events go on with, as each runAgent call starts its boundary anew"},
		{name: "a message id of its own", events: []string{
			`{"type":"THINKING_TEXT_MESSAGE_START","messageId":"mine"}`,
		}, want: `[{"id":"` + mintID("", 1) + `","role":"reasoning","content":""}]`, warn: []error{ErrProtocolVersion},
			reason: "the old events name no message: an id is made, as in the reference"},
	})
}

// TestReasoningRole checks the one rule for the role of a START: a role
// its type allows, but for the pre-1.0 shape "assistant" on a
// REASONING_MESSAGE_START, read as "reasoning" with a warning.
func TestReasoningRole(t *testing.T) {
	t.Parallel()
	runEventCases(t, []eventCase{
		{name: "reasoning", events: []string{`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}`},
			want: `[{"id":"r1","role":"reasoning","content":""}]`, reason: "the role AG-UI 1.0 allows"},
		{name: "assistant, as the Go example server sends it", events: []string{
			`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"assistant"}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"hmm"}`,
		}, want: `[{"id":"r1","role":"reasoning","content":"hmm"}]`, warn: []error{ErrProtocolVersion},
			warnText: []string{`role "assistant" is a shape of a version before 1.0`},
			reason:   "a pre-1.0 shape, read as reasoning with a warning; the reference's runAgent rejects the run"},
		{name: "another role", events: []string{`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"user"}`},
			want: `[]`, fatal: ErrMalformedEvent, fatalText: `a reasoning message's role is "reasoning"`, reason: "no role but reasoning, as for a text message's four"},
		{name: "no role", events: []string{`{"type":"REASONING_MESSAGE_START","messageId":"r1"}`},
			want: `[]`, fatal: ErrMalformedEvent, reason: "the role is required"},
		{name: "a text message's role", events: []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"reasoning"}`},
			want: `[]`, fatal: ErrMalformedEvent, reason: "the same rule: a role the type does not allow"},
	})
}

// TestThinkingCheckpoint cuts thinkingStream and the streams under
// testdata/legacy at every event boundary: a Consumer restored from a
// checkpoint taken there ends where the uncut one ends, since the
// checkpoint keeps what THINKING_* events go on with.
func TestThinkingCheckpoint(t *testing.T) {
	t.Parallel()
	streams := [][]string{thinkingStream}
	files, err := filepath.Glob(filepath.Join("testdata", "legacy", "*.sse"))
	require.NoError(t, err)
	for _, file := range files {
		var events []string
		for _, ev := range streamEvents(t, file) {
			events = append(events, string(ev))
		}
		streams = append(streams, events)
	}
	for _, stream := range streams {
		whole := New(nil)
		for _, ev := range stream {
			require.NoError(t, whole.Apply([]byte(ev)))
		}
		for k := range stream {
			cut := New(nil)
			for _, ev := range stream[:k] {
				require.NoError(t, cut.Apply([]byte(ev)))
			}
			restored, err := Restore(cut.Checkpoint(), nil)
			require.NoError(t, err, "cut at %d", k)
			for _, ev := range stream[k:] {
				require.NoError(t, restored.Apply([]byte(ev)))
			}
			assert.Equal(t, string(whole.Checkpoint()), string(restored.Checkpoint()), "cut at %d", k)
		}
	}
	_, err = Restore([]byte(regexp.MustCompile(`"format"`).ReplaceAllString(string(New(nil).Checkpoint()), `"thinking":{"messageId":""},"format"`)), nil)
	assert.ErrorContains(t, err, "thinking", "an empty id is no checkpoint's")
}

// runAgentCase is a case for the reference client's runAgent: a thread's
// starting state and messages, and the events of a run.
type runAgentCase struct {
	name              string
	state, messages   string // JSON text; "" for {} and []
	events            []string
	replace           map[string]string // messages (by id) held instead of the reference's, for a row of the differences table in docs/semantics.md
	conversions, skip int               // events we read as their 1.0 equivalents, and events we skip
	refused           bool              // the reference's runAgent refuses the run: we hold what it holds of the run in its 1.0 shape
}

// TestRunAgentOracle runs every recorded stream of ../shared/streams, the
// pre-1.0 producers' streams under testdata/legacy, the Mastra runs under
// testdata/streams and thinkingStream
// through the reference client's runAgent (apply.mjs --runagent, its
// whole middleware chain) and requires the thread it ends with, the ids
// it makes up aside, and a warning for each event it converts. A stream
// whose REASONING_MESSAGE_START says the role "assistant", which runAgent
// refuses, must give the thread runAgent makes of it with the role
// "reasoning".
func TestRunAgentOracle(t *testing.T) {
	t.Parallel()
	var cases []runAgentCase
	dir := sharedDir(t, "streams")
	files, err := filepath.Glob(filepath.Join(dir, "*.*"))
	require.NoError(t, err)
	for _, file := range files {
		ext := filepath.Ext(file)
		if ext != ".sse" && ext != ".jsonl" {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(file), ext)
		var initial struct{ State, Messages json.RawMessage }
		readJSON(t, filepath.Join(dir, "expected", name+".initial.json"), &initial)
		c := runAgentCase{name: name, state: string(initial.State), messages: string(initial.Messages)}
		for _, ev := range streamEvents(t, file) {
			c.events = append(c.events, string(ev))
		}
		c.replace, c.skip = sharedDifferences[name].messages, len(sharedDifferences[name].warnings)
		cases = append(cases, c)
	}
	legacy, err := filepath.Glob(filepath.Join("testdata", "legacy", "*.sse"))
	require.NoError(t, err)
	require.NotEmpty(t, legacy)
	bundled, err := filepath.Glob(filepath.Join("testdata", "streams", "mastra-*.sse"))
	require.NoError(t, err)
	for _, file := range append(legacy, bundled...) {
		var input struct{ State, Messages json.RawMessage }
		if _, err := os.Stat(strings.TrimSuffix(file, ".sse") + ".input.json"); err == nil {
			readJSON(t, strings.TrimSuffix(file, ".sse")+".input.json", &input)
		}
		c := runAgentCase{name: filepath.Base(file), state: string(input.State), messages: string(input.Messages)}
		for _, ev := range streamEvents(t, file) {
			c.events = append(c.events, string(ev))
			if strings.Contains(string(ev), `"type":"THINKING_`) {
				c.conversions++
			}
		}
		if n := roleConversions(c.events); n > 0 {
			c.conversions, c.refused = c.conversions+n, true
		}
		cases = append(cases, c)
	}
	cases = append(cases, runAgentCase{name: "thinkingStream", events: thinkingStream, conversions: 6})

	var oc []oracle.Case
	for _, c := range cases {
		events := c.events
		if c.refused {
			oc = append(oc, oracleCase(c, events))
			events = slices.Clone(events)
			for i, ev := range events {
				if strings.Contains(ev, `"type":"REASONING_MESSAGE_START"`) {
					events[i] = strings.Replace(ev, `"role":"assistant"`, `"role":"reasoning"`, 1)
				}
			}
		}
		oc = append(oc, oracleCase(c, events))
	}
	results := oracle.RunAgent(t, oc)
	for _, c := range cases {
		res := results[0]
		if c.refused {
			assert.Contains(t, res.Error, "reasoning", "%s: the reference's runAgent refuses the role \"assistant\"", c.name)
			results = results[1:]
			res = results[0]
		}
		results = results[1:]
		t.Run(c.name, func(t *testing.T) {
			require.Empty(t, res.Error, "the reference client's runAgent takes the run")
			con := New(nil)
			warnings := warningsOf(con)
			require.NoError(t, startRun(con, `{"state":`+cmp.Or(c.state, "{}")+`,"messages":`+cmp.Or(c.messages, "[]")+`}`))
			for j, ev := range c.events {
				require.NoError(t, con.Apply([]byte(ev)), "event %d", j+1)
			}
			var converted, skips int
			for _, w := range warnings() {
				if errors.Is(w, ErrProtocolVersion) {
					converted++
				}
				if skipped(w) {
					skips++
				}
			}
			assert.Equal(t, c.conversions, converted, "a warning for each event read as its 1.0 equivalent")
			assert.Equal(t, c.skip, skips, "events skipped")
			compat := 0
			for _, w := range res.Warnings {
				if strings.HasPrefix(w, "[ag-ui][compat] Converting deprecated THINKING_") {
					compat++
				}
			}
			assert.Equal(t, compat, converted-roleConversions(c.events), "the reference warns of each THINKING_* event it converts")
			want := normalizeMinted(t, string(res.Messages), c.replace)
			got := normalizeMinted(t, messagesJSON(con), nil)
			assert.JSONEq(t, want, got, "messages")
			assertJSONEqual(t, mustParse(t, string(res.State)), con.State().node(), "state")
		})
	}
}

// oracleCase returns the oracle's case of c, with events.
func oracleCase(c runAgentCase, events []string) oracle.Case {
	o := oracle.Case{State: json.RawMessage(cmp.Or(c.state, "{}")), Messages: json.RawMessage(cmp.Or(c.messages, "[]"))}
	for _, ev := range events {
		o.Events = append(o.Events, json.RawMessage(ev))
	}
	return o
}

// roleConversions counts the REASONING_MESSAGE_START events with the role
// "assistant", which the reference's runAgent rejects and a Consumer reads
// with a warning.
func roleConversions(events []string) int {
	n := 0
	for _, ev := range events {
		if strings.Contains(ev, `"type":"REASONING_MESSAGE_START"`) && strings.Contains(ev, `"role":"assistant"`) {
			n++
		}
	}
	return n
}

// normalizeMinted returns the JSON array of messages with each message in
// place of the one replace names by its id, and the ids of reasoning
// messages that are UUIDs, which a client makes up for a pre-1.0 producer,
// renamed by their order.
func normalizeMinted(t *testing.T, messages string, replace map[string]string) string {
	t.Helper()
	var ms []map[string]any
	require.NoError(t, json.Unmarshal([]byte(messages), &ms))
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	n := 0
	for i, m := range ms {
		id, _ := m["id"].(string)
		if r, ok := replace[id]; ok {
			ms[i] = nil
			require.NoError(t, json.Unmarshal([]byte(r), &ms[i]))
			continue
		}
		if m["role"] == "reasoning" && uuid.MatchString(id) {
			n++
			m["id"] = "minted-" + strconv.Itoa(n)
		}
	}
	out, err := json.Marshal(ms)
	require.NoError(t, err)
	return string(out)
}
