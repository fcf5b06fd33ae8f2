// Tests of Clone: a clone and its original go on apart, each as a Consumer
// fed its own events from the start would.

package aguistate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fedConsumer returns a new Consumer with opts fed events in order, and
// the error of each.
func fedConsumer(opts *Options, events ...[]string) (*Consumer, []string) {
	c := New(opts)
	var errs []string
	for _, evs := range events {
		errs = append(errs, applyEach(c, evs)...)
	}
	return c, errs
}

// applyEach applies events to c in order, and returns the error of each
// ("" for none).
func applyEach(c *Consumer, events []string) []string {
	errs := make([]string, len(events))
	for i, ev := range events {
		if err := c.Apply([]byte(ev)); err != nil {
			errs[i] = err.Error()
		}
	}
	return errs
}

// TestClone feeds a Consumer and its clone different events after the
// same prefix: each must end as a new Consumer fed the prefix and its own
// events does, with the same errors, and the view the two shared must stay
// as it was.
func TestClone(t *testing.T) {
	t.Parallel()
	start := `{"type":"RUN_STARTED","threadId":"t","runId":"r1"}`
	tests := []struct {
		name, reason string
		prefix       []string
		original     []string
		clone        []string
	}{
		{
			name:     "text to the same open message",
			reason:   "both append in place to a buffer that one of them made",
			prefix:   []string{start, `{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`},
			original: []string{`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":" there"}`},
			clone:    []string{`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"p!"}`, `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`},
		},
		{
			name:     "surrogate pair split",
			reason:   "the high half waits beside the buffer; each joins its own low half",
			prefix:   []string{start, `{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a\ud83d"}`},
			original: []string{`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\ude00b"}`},
			clone:    []string{`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\ude03c"}`},
		},
		{
			name:     "tool call arguments and reasoning",
			reason:   "arguments and reasoning text stream as a message's text does",
			prefix:   []string{start, `{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}`, `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"a\":"}`, `{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}`, `{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"hm"}`},
			original: []string{`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"1}"}`, `{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"m"}`},
			clone:    []string{`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"2}"}`, `{"type":"TOOL_CALL_END","toolCallId":"c1"}`, `{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"?"}`},
		},
		{
			name:     "open chunk stream",
			reason:   "a chunk without an id goes on with the stream that each holds open",
			prefix:   []string{start, `{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`},
			original: []string{`{"type":"TEXT_MESSAGE_CHUNK","delta":"b"}`},
			clone:    []string{`{"type":"TEXT_MESSAGE_CHUNK","delta":"c"}`, `{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","delta":"d"}`},
		},
		{
			name:   "run phase, steps and interrupts",
			reason: "the run's scopes and lifecycle are the clone's own",
			prefix: []string{start, `{"type":"STEP_STARTED","stepName":"s"}`},
			original: []string{`{"type":"STEP_FINISHED","stepName":"s"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r1","outcome":{"type":"interrupt","interrupts":[{"id":"i1"}]}}`},
			clone: []string{`{"type":"RUN_ERROR","message":"boom"}`, `{"type":"STEP_FINISHED","stepName":"s"}`},
		},
		{
			name:     "state and messages",
			reason:   "a patch or snapshot of one changes nothing of the other",
			prefix:   []string{start, `{"type":"STATE_SNAPSHOT","snapshot":{"a":[1]}}`, `{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"x"}`},
			original: []string{`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a/-","value":2}]}`, `{"type":"MESSAGES_SNAPSHOT","messages":[]}`},
			clone:    []string{`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/b"}]}`, `{"type":"TEXT_MESSAGE_CHUNK","delta":"y"}`},
		},
		{
			name:     "fatal events",
			reason:   "a fatal event counts in the one that got it only",
			prefix:   []string{start},
			original: []string{`{"type":"TEXT_MESSAGE_CONTENT"}`, `{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"x"}`},
			clone:    []string{`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"y"}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := fedConsumer(nil, tt.prefix)
			shared := c.cur.Load()
			before := string(shared.checkpoint())
			d := c.Clone()
			require.Equal(t, before, string(d.Checkpoint()), "a clone holds what c holds")

			gotC, gotD := applyEach(c, tt.original), applyEach(d, tt.clone)
			wantC, errsC := fedConsumer(nil, tt.prefix, tt.original)
			wantD, errsD := fedConsumer(nil, tt.prefix, tt.clone)
			assert.Equal(t, string(wantC.Checkpoint()), string(c.Checkpoint()), "the original: %s", tt.reason)
			assert.Equal(t, string(wantD.Checkpoint()), string(d.Checkpoint()), "the clone: %s", tt.reason)
			assert.Equal(t, errsC[len(tt.prefix):], gotC, "the original's errors")
			assert.Equal(t, errsD[len(tt.prefix):], gotD, "the clone's errors")
			assert.Equal(t, before, string(shared.checkpoint()), "the view they shared is as it was")
		})
	}
}

// TestCloneTokens streams tokens to the same open message of a Consumer
// and of its clone at once, from two goroutines: each must hold its own
// text, and a reader of the message before must still read its own (the
// race detector sees a write into the other's bytes).
func TestCloneTokens(t *testing.T) {
	t.Parallel()
	c, _ := fedConsumer(nil, []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"go:"}`})
	before, _ := c.Message("m1")
	clones := []*Consumer{c, c.Clone(), c.Clone()}
	const tokens = 200
	var wg sync.WaitGroup
	for i, x := range clones {
		wg.Go(func() {
			for range tokens {
				_ = x.Apply(fmt.Appendf(nil, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"%d"}`, i))
			}
		})
	}
	wg.Wait()
	for i, x := range clones {
		m, ok := x.Message("m1")
		require.True(t, ok)
		assert.Equal(t, "go:"+strings.Repeat(fmt.Sprint(i), tokens), m.Text(), "Consumer %d", i)
	}
	assert.Equal(t, "go:", before.Text(), "the message as it was before")
}

// TestCloneWhileApplying clones a Consumer while another goroutine
// applies events to it: each clone holds the Consumer as it was between
// two events.
func TestCloneWhileApplying(t *testing.T) {
	t.Parallel()
	c, _ := fedConsumer(nil, []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`})
	const tokens = 500
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range tokens {
			_ = c.Apply([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"ab"}`))
		}
	}()
	var clones []*Consumer
	for len(clones) < 50 {
		clones = append(clones, c.Clone())
	}
	<-done
	for _, d := range clones {
		m, _ := d.Message("m1")
		events := d.cur.Load().events
		assert.Equal(t, strings.Repeat("ab", events-1), m.Text(), "the clone after %d events", events)
		require.NoError(t, d.Apply([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"!"}`)))
		m, _ = d.Message("m1")
		assert.Equal(t, strings.Repeat("ab", events-1)+"!", m.Text())
	}
	m, _ := c.Message("m1")
	assert.Equal(t, strings.Repeat("ab", tokens), m.Text(), "the original")
}

// openEvents open a text message, a reasoning message and a tool call
// with text, whatever the events before: a RUN_STARTED that is fatal
// leaves the run that is on.
var openEvents = []string{
	`{"type":"RUN_STARTED","threadId":"t","runId":"r9"}`,
	`{"type":"TEXT_MESSAGE_START","messageId":"m9"}`,
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m9","delta":"text "}`,
	`{"type":"REASONING_MESSAGE_START","messageId":"r9","role":"reasoning"}`,
	`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r9","delta":"think "}`,
	`{"type":"TOOL_CALL_START","toolCallId":"c9","toolCallName":"f","parentMessageId":"a9"}`,
	`{"type":"TOOL_CALL_ARGS","toolCallId":"c9","delta":"args "}`,
}

// genTokens returns n events drawn from r: half of them tokens to what
// openEvents opened, the rest as genLegacyEvents draws them. Each delta
// starts with tag and the event's index, so that two Consumers fed
// sequences of different tags append different text.
func genTokens(r *rand.Rand, n int, tag string) []string {
	events := genLegacyEvents(r, n)
	tokens := []string{
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m9","delta":"t"}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r9","delta":"r"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"c9","delta":"a"}`,
	}
	for i := range events {
		if r.IntN(2) == 0 {
			events[i] = tokens[r.IntN(len(tokens))]
		}
		events[i] = strings.ReplaceAll(events[i], `"delta":"`, fmt.Sprintf(`"delta":"%s%d.`, tag, i))
	}
	return events
}

// TestCloneProperty feeds a Consumer and its clone different generated
// sequences (genTokens) after a generated prefix and openEvents, event by
// event in turn: each must end as a new Consumer fed the prefix and its
// own sequence does, with the same errors, and the view they shared must
// stay as it was. Enough of the sequences must append text to a message
// that both hold, open and with text, when cloned.
func TestCloneProperty(t *testing.T) {
	t.Parallel()
	shared := 0
	for seed := range uint64(propertyIterations()) {
		r := rand.New(rand.NewPCG(seed, 11))
		opts := propertyOptions()
		prefix := append(genLegacyEvents(r, 30), openEvents...)
		a, b := genTokens(r, 40, "a"), genTokens(r, 40, "b")
		c, _ := fedConsumer(opts, prefix)
		view := c.cur.Load()
		before := string(view.checkpoint())
		d := c.Clone()
		var gotA, gotB []string
		for i := range a {
			gotA = append(gotA, applyEach(c, a[i:i+1])...)
			gotB = append(gotB, applyEach(d, b[i:i+1])...)
		}
		wantA, errsA := fedConsumer(opts, prefix, a)
		wantB, errsB := fedConsumer(opts, prefix, b)
		where := fmt.Sprintf("seed %d", seed)
		require.Equal(t, string(wantA.Checkpoint()), string(c.Checkpoint()), "%s: the original", where)
		require.Equal(t, string(wantB.Checkpoint()), string(d.Checkpoint()), "%s: the clone", where)
		require.Equal(t, errsA[len(prefix):], gotA, "%s: the original's errors", where)
		require.Equal(t, errsB[len(prefix):], gotB, "%s: the clone's errors", where)
		require.Equal(t, before, string(view.checkpoint()), "%s: the view they shared", where)
		if grewBoth(view, c, d) {
			shared++
		}
	}
	t.Logf("%d sequences; %d appended text to a message that the original and the clone shared", propertyIterations(), shared)
	assert.GreaterOrEqual(t, shared, propertyIterations()/5, "the generator no longer appends to a shared message on both sides")
}

// grewBoth reports whether c and d each appended text of its own to a
// message that view holds with text.
func grewBoth(view *view, c, d *Consumer) bool {
	for m := range view.messages.All() {
		text := m.Text()
		x, okX := c.Message(m.id)
		y, okY := d.Message(m.id)
		if text != "" && okX && okY && len(x.Text()) > len(text) && len(y.Text()) > len(text) && x.Text() != y.Text() {
			return true
		}
	}
	return false
}
