// Tests of ReadEvents and Run.

package aguistate

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

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
		{name: "keep-alives not counted", in: "data:\n\n: ping\n\ndata: \n\ndata: {\"type\":\"" + strings.Repeat("x", 80) + "\"}\n\n", err: ErrLimit, index: 1, reason: "a keep-alive is not an event: Run numbers the first event 1 too"},
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

// TestReadEventsCutShort checks that a stream that ends inside an event is
// io.ErrUnexpectedEOF in every framing, never an event error, and that the
// event cut short is neither yielded nor applied.
func TestReadEventsCutShort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason, in string
		want             []string
	}{
		{"sse without blank line", "the dispatching blank line is missing and the data is not whole", "data: {\"type\":\"A\"}\n\ndata: {\"type\":\n", []string{`{"type":"A"}`}},
		{"sse mid data line", "the body stops inside a data line", "data: {\"type\":\"A\"}\n\ndata: {\"ty", []string{`{"type":"A"}`}},
		{"json lines", "a last line without LF that is not JSON", "{\"type\":\"A\"}\n{\"type\":\"B", []string{`{"type":"A"}`}},
		{"json array mid element", "an element cut short", `[{"type":"A"},{"type":"B"`, []string{`{"type":"A"}`}},
		{"json array without bracket", "every element whole, no closing bracket", `[{"type":"A"}`, []string{`{"type":"A"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			var err error
			for text, e := range ReadEvents(strings.NewReader(tt.in), nil) {
				if e != nil {
					err = e
					continue
				}
				got = append(got, string(text))
			}
			assert.Equal(t, tt.want, got, tt.reason)
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF, tt.reason)
			var ee *EventError
			assert.False(t, errors.As(err, &ee), "no event arrived to blame: %v", err)

			c := New(nil)
			err = c.Run(context.Background(), strings.NewReader(tt.in))
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF, tt.reason)
			assert.False(t, errors.As(err, &ee), "Run: no event arrived to blame: %v", err)
			assert.Equal(t, len(tt.want), c.cur.Load().events, "only whole events count")
		})
	}
}

// TestRunReadErrorAfterContext checks that a read that fails because ctx
// ended returns ctx's own error, not an event error naming an event that
// never arrived.
func TestRunReadErrorAfterContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	r := io.MultiReader(strings.NewReader("data: {\"type\":\"CUSTOM\"}\n\n"), readerFunc(func([]byte) (int, error) {
		cancel()
		return 0, errors.New("use of closed network connection")
	}))
	err := New(nil).Run(ctx, r)
	assert.Equal(t, context.Canceled, err, "ctx's own error")

	err = New(nil).Run(context.Background(), io.MultiReader(strings.NewReader("data: {\"type\":\"CUSTOM\"}\n\n"),
		iotest.ErrReader(errors.New("connection reset"))))
	var ee *EventError
	assert.False(t, errors.As(err, &ee), "a failed read is not an event: %v", err)
	assert.ErrorContains(t, err, "connection reset")
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestRunGap checks MaxGapSize: a stream of filler without events (blank
// lines, comments, keep-alives, white space) stops within the read buffer
// after the bound, with an error wrapping ErrLimit that names the option
// and blames no event; filler under the bound between events is fine.
func TestRunGap(t *testing.T) {
	t.Parallel()
	const event = "data: {\"type\":\"STEP_STARTED\",\"stepName\":\"s\"}\n\n"
	tests := []struct {
		name, reason, filler string
	}{
		{"blank lines", "a decompressed body of newlines", "\n"},
		{"comments", "SSE comments", ": ping\n"},
		{"keep-alives", "events of white space", "data: \n\n"},
		{"other fields", "fields other than data", "event: x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := &countingReader{r: io.MultiReader(strings.NewReader(event), strings.NewReader(strings.Repeat(tt.filler, (8<<20)/len(tt.filler))))}
			c := New(nil)
			err := c.Run(context.Background(), in)
			require.ErrorIs(t, err, ErrLimit, tt.reason)
			assert.Contains(t, err.Error(), "MaxGapSize")
			var ee *EventError
			assert.False(t, errors.As(err, &ee), "no event to blame: %v", err)
			assert.Equal(t, 1, c.cur.Load().events, "the event before the filler applies, and no other counts")
			assert.Less(t, in.n, 64<<10+3*64<<10, "read stops within a buffer of the bound")
		})
	}
	fits := strings.Repeat(event+strings.Repeat(": ping\n", 9000), 20)
	c := New(nil)
	require.NoError(t, c.Run(context.Background(), strings.NewReader(fits)), "63 KB of comments between events are fine")
	assert.Equal(t, 20, c.cur.Load().events)
	c = New(&Options{MaxGapSize: 1 << 20})
	require.NoError(t, c.Run(context.Background(), strings.NewReader(event+strings.Repeat("\n", 1<<19)+event)), "a larger bound allows more")
}
