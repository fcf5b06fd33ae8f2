// Tests of ReadEvents and Run.

package aguistate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		max      int // MaxEventSize; 0 means 64
		want     []string
		err      error // nil, or the sentinel the last yield wraps
		index    int   // the error's EventError.Position
		reason   string
	}{
		{name: "sse", in: "data: {\"type\":\"A\"}\n\ndata:{\"type\":\"B\"}\r\n\r\n", want: []string{`{"type":"A"}`, `{"type":"B"}`}, reason: "WHATWG framing"},
		{name: "sse keep-alive", in: "data:\n\n: ping\n\ndata: {\"type\":\"A\"}\n\ndata:  \n\n", want: []string{`{"type":"A"}`}, reason: "empty data is a keep-alive, not an event"},
		{name: "json lines", in: "{\"type\":\"A\"}\n\n{\"type\":\"B\"}", want: []string{`{"type":"A"}`, `{"type":"B"}`}, reason: "one event per line"},
		{name: "json array", in: " [ {\"type\":\"A\"} , {\"type\":\"B\"} ] ", want: []string{`{"type":"A"}`, `{"type":"B"}`}, reason: "elements with their exact bytes"},
		{name: "empty", in: "", reason: "EOF is success"},
		{name: "too large", in: "{\"type\":\"A\"}\n{\"type\":\"" + strings.Repeat("x", 100) + "\"}\n", want: []string{`{"type":"A"}`}, err: ErrLimit, index: 2, reason: "MaxEventSize is 64 here"},
		{name: "broken array", in: `[{"type":"A"},]`, want: []string{`{"type":"A"}`}, err: ErrMalformedEvent, index: 2, reason: "a framing error"},
		{name: "very deep array element", in: "[" + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "]", max: 1 << 20, err: ErrLimit, index: 1, reason: "too deep is a limit in every framing, however large the event may be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			var err error
			max := tt.max
			if max == 0 {
				max = 64
			}
			for text, e := range ReadEvents(iotest.HalfReader(strings.NewReader(tt.in)), &Options{MaxEventSize: max}) {
				if e != nil {
					err = e
					assert.Nil(t, text, "no text with an error")
					continue
				}
				got = append(got, string(text))
			}
			assert.Equal(t, tt.want, got, tt.reason)
			if tt.err == nil {
				assert.NoError(t, err, tt.reason)
				return
			}
			require.ErrorIs(t, err, tt.err, tt.reason)
			var ee *EventError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tt.index, ee.Position)
		})
	}
}

// TestRunCountsFromTheConsumer checks that Run numbers a framing error among
// all the events the Consumer was given, and stops when ctx is done.
func TestRunCountsFromTheConsumer(t *testing.T) {
	t.Parallel()
	c := New(&Options{MaxEventSize: 64})
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":1}`)))
	err := c.Run(context.Background(), strings.NewReader("{\"type\":\"CUSTOM\"}\n{\"type\":\""+strings.Repeat("x", 80)+"\"}\n"))
	var ee *EventError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.Position, "two events before it: one applied alone, one by Run")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = c.Run(ctx, strings.NewReader(`{"type":"STATE_SNAPSHOT","snapshot":2}`))
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Equal(t, "1", c.State().String(), "nothing applied after ctx ended")
}
