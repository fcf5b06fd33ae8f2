// Tests of change notifications: what each Change reports, subscriber order
// and cancelling, logging, panics.

package aguistate

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChange checks what a Change reports for each kind of event: changes
// are reported only when real.
func TestChange(t *testing.T) {
	t.Parallel()
	setup := []string{
		`{"type":"STATE_SNAPSHOT","snapshot":{"a":1,"b":[1,2]}}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"hi"},{"id":"x","role":"activity","activityType":"T","content":{}}]}`,
	}
	tests := []struct {
		name   string
		event  string
		want   Change
		reason string
	}{
		{"empty delta", `{"type":"STATE_DELTA","delta":[]}`, Change{}, "an empty delta changes nothing"},
		{"test-only delta", `{"type":"STATE_DELTA","delta":[{"op":"test","path":"/a","value":1}]}`, Change{}, "test changes nothing"},
		{"equal snapshot", `{"type":"STATE_SNAPSHOT","snapshot":{"b":[1,2.0],"a":1e0}}`, Change{}, "equal by value, whatever the order and number form"},
		{"replace with an equal value", `{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/a","value":1.0}]}`, Change{}, "the state is the same value"},
		{"real delta", `{"type":"STATE_DELTA","delta":[{"op":"add","path":"/b/-","value":3}]}`, Change{StateChanged: true}, "a real change"},
		{"add onto an equal member", `{"type":"STATE_DELTA","delta":[{"op":"add","path":"/b","value":[1,2]}]}`, Change{}, "add replaces an existing member: equal, no change"},
		{"move onto itself", `{"type":"STATE_DELTA","delta":[{"op":"move","from":"/a","path":"/a"}]}`, Change{}, "a value moved onto itself stays"},
		{"a later equal write", `{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/a","value":1},{"op":"remove","path":"/b/0"}]}`, Change{StateChanged: true}, "one operation that changes is enough"},
		{"undone in the same delta", `{"type":"STATE_DELTA","delta":[{"op":"add","path":"/c","value":1},{"op":"remove","path":"/c"}]}`, Change{StateChanged: true}, "derived from the operations, which wrote and removed a value"},
		{"skipped delta", `{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/nope"}]}`, Change{Diverged: true}, "a skipped patch changes nothing and says so"},
		{"messages snapshot", `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"hi!"},{"id":"a1","role":"assistant","content":"yo"}]}`,
			Change{Added: []string{"a1"}, Replaced: []string{"u1"}}, "replaced by value, appended; the activity message stays"},
		{"same messages", `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"hi"}]}`, Change{}, "equal messages are not replaced"},
		{"dropping", `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"y","role":"activity","activityType":"T","content":{}}]}`,
			Change{Added: []string{"y"}, Removed: []string{"u1", "x"}}, "a snapshot with an activity message drops the others"},
		{"custom", `{"type":"CUSTOM","name":"n","value":{"k":[1]}}`, Change{}, "delivered, changes nothing"},
		{"custom with odd members", `{"type":"CUSTOM","value":1,"subagentRunId":5}`, Change{}, "passed on, never an error"},
		{"unknown type", `{"type":"FUTURE_EVENT","x":1}`, Change{}, "the protocol grows: delivered, never an error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(nil)
			for _, ev := range setup {
				require.NoError(t, c.Apply([]byte(ev)))
			}
			var got []Change
			c.Subscribe(func(ch Change) { got = append(got, ch) })
			require.NoError(t, c.Apply([]byte(tt.event)))
			require.Len(t, got, 1, "one Change per event")
			ch := got[0]
			assert.Equal(t, tt.event, ch.Event.Value().String(), "the event, verbatim")
			assert.Equal(t, 3, ch.Event.Position)
			assert.Equal(t, tt.want.Diverged, ch.Warning != nil, "a warning exactly when skipped")
			ch.Event, ch.Warning = Event{}, nil
			assert.Equal(t, tt.want, ch, tt.reason)
			assert.Equal(t, tt.want.Added != nil || tt.want.Replaced != nil || tt.want.Removed != nil, ch.MessagesChanged())
		})
	}
}

// TestSubscribers checks the delivery guarantee: in order, to every
// subscriber, past a panicking one, and not after cancel.
func TestSubscribers(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	c := New(&Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	var first, last []int
	c.Subscribe(func(ch Change) { first = append(first, ch.Event.Position) })
	c.Subscribe(func(Change) { panic("subscriber bug") })
	cancel := c.Subscribe(func(ch Change) { last = append(last, ch.Event.Position) })
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/a","value":2}]}`)))
	cancel()
	cancel() // twice is fine
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/a","value":3}]}`)))
	assert.Equal(t, []int{1, 2, 3}, first, "every event, in order")
	assert.Equal(t, []int{1, 2}, last, "the panic did not stop delivery; cancel did")
	assert.Equal(t, `{"a":3}`, c.State().String(), "the panic did not corrupt the Consumer")
	assert.Contains(t, logs.String(), "subscriber panicked")
	assert.Error(t, c.Apply([]byte(`{"type":"STATE_DELTA"}`)))
	assert.Equal(t, []int{1, 2, 3}, first, "a fatal event has no Change")
}

// TestWarningsAreLogged checks the Logger option.
func TestWarningsAreLogged(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	c := New(&Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/x"}]}`)))
	assert.Contains(t, logs.String(), "level=WARN")
	assert.Contains(t, logs.String(), "event=1 type=STATE_DELTA")
	assert.Contains(t, logs.String(), `no member \"x\" (at \"/x\")`)
}

// TestSubscriberMayCheckpoint checks the persistence pattern: a subscriber
// that checkpoints after every change sees each event's result.
func TestSubscriberMayCheckpoint(t *testing.T) {
	t.Parallel()
	c := New(&Options{ValidateState: func(Value) error { return nil }})
	var saved [][]byte
	c.Subscribe(func(Change) { saved = append(saved, c.Checkpoint()) })
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/a","value":2}]}`)))
	require.Len(t, saved, 2)
	r, err := Restore(saved[1], nil)
	require.NoError(t, err)
	assert.Equal(t, `{"a":2}`, r.State().String())
	assert.Contains(t, string(saved[0]), `"events":1`)
}

// panicHandler is a slog.Handler that panics, as a broken one might.
type panicHandler struct{ slog.Handler }

func (panicHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panicHandler) Handle(context.Context, slog.Record) error { panic("handler bug") }

// TestPanickingLogger checks that a logger that panics cannot escape Apply
// or keep the Change from subscribers.
func TestPanickingLogger(t *testing.T) {
	t.Parallel()
	c := New(&Options{Logger: slog.New(panicHandler{})})
	var got int
	c.Subscribe(func(Change) { got++ })
	c.Subscribe(func(Change) { panic("subscriber bug") })
	require.NotPanics(t, func() {
		require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/x"}]}`)))
	})
	assert.Equal(t, 1, got)
	assert.True(t, c.Diverged())
}
