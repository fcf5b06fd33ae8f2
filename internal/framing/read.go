// Read and the Format it reads: detection, the shared buffer, and the iterator contract.

package framing

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"
	"time"
)

// Format names the framing of an event stream. The zero value is
// [Auto].
type Format int

const (
	// Auto picks the framing from the first byte that is not ASCII
	// whitespace (space, tab, LF, FF, CR), after an optional UTF-8 byte
	// order mark (EF BB BF): "[" selects [JSONArray], "{" selects
	// [JSONLines], and anything else selects [SSE]. A stream
	// that is empty or all whitespace yields no payloads.
	Auto Format = iota

	// SSE is a server-sent event stream, interpreted as in HTML Living
	// Standard section 9.2.6 "Interpreting an event stream": lines end in
	// LF, CR or CRLF; a leading BOM is dropped; the values of the "data"
	// fields of one event are joined with LF; a blank line dispatches the
	// event. Only data is yielded: "id" and "retry" set [Fields], and
	// "event", comments and unknown fields are skipped. An event that is not ended by a blank line before
	// EOF is yielded when its data is one whole JSON text, as the reference
	// client does (the standard drops it); with any other data the stream
	// was cut short: io.ErrUnexpectedEOF. Events with no data field are
	// not yielded; an event whose data is empty yields an empty payload.
	// Bytes pass through as they are: unlike the standard, invalid UTF-8 is
	// not replaced with U+FFFD (the JSON parser of the caller judges it).
	SSE

	// JSONLines is one payload per line (JSON Lines): lines end in LF,
	// each line is trimmed of ASCII whitespace (so CRLF works), blank lines
	// are skipped, and a last line without LF still counts when it is valid
	// JSON; when it is not, it was cut short: io.ErrUnexpectedEOF. Other
	// lines are not checked to be JSON.
	JSONLines

	// JSONArray is one JSON array (RFC 8259 section 5) whose elements
	// are the payloads, read one element at a time. Each element is yielded
	// with its exact bytes and checked to be a JSON value; a stream that is
	// not one array (an empty stream included), or has anything but
	// whitespace after it, fails with [ErrSyntax]; one that ends before its
	// closing bracket was cut short: io.ErrUnexpectedEOF. Elements are
	// yielded as they are read, so an error at the end of the array comes
	// after them.
	JSONArray
)

const (
	// formatNone is what detection returns for an empty stream.
	formatNone Format = -1

	// defaultMaxSize is the payload limit used when maxSize <= 0: 16 MiB.
	defaultMaxSize = 16 << 20

	// defaultMaxGap is the gap limit used when maxGap <= 0: 64 KiB.
	defaultMaxGap = 64 << 10

	// bufSize is the size of the read buffer.
	bufSize = 64 << 10

	// lineAllowance is how much longer than maxSize a skipped SSE line
	// (comment, id, event, retry or unknown field) may be before it fails
	// with ErrTooLarge. It covers the field name and separator.
	lineAllowance = 64
)

// errStopped tells Read that the consumer stopped ranging; nothing is yielded.
var errStopped = errors.New("stopped")

// Read returns an iterator over the raw payloads in r: the JSON text of each
// AG-UI event, framed as format says (see [Format]). maxSize is the largest
// payload in bytes; maxSize <= 0 means 16 MiB (16777216 bytes).
//
// The iterator stops at the first error, which it yields once as (nil, err),
// where err is an [*Error] wrapping [ErrTooLarge], [ErrGap], [ErrSyntax],
// io.ErrUnexpectedEOF (the stream ended inside an event, in every format) or
// the error returned by r. It never yields a payload together with an error. io.EOF
// from r is success: the iteration just ends. Read does not reconnect or
// retry; [ReadFields] also reports the SSE "id" and "retry" fields.
//
// The yielded slice is a view into a reused buffer: it is valid only until
// the next iteration step, or the end of the iteration, after which another
// stream may reuse the buffer. Copy or parse it before continuing. Payloads are
// never nil, but may be empty (an SSE event whose data is empty).
//
// Memory stays near maxSize plus a 64 KiB read buffer, however long a line
// or element is. A payload longer than maxSize fails with [ErrTooLarge], and
// so does an SSE line of another field longer than maxSize plus 64 bytes.
// More than 64 KiB read between two events that is not part of one fails
// with [ErrGap] (see [ReadFields]).
//
// Range over the iterator once: it reads r through its own buffer, so a
// second range starts wherever r was left, not at the next payload.
func Read(r io.Reader, format Format, maxSize int) iter.Seq2[[]byte, error] {
	return ReadFields(r, format, maxSize, 0, nil)
}

// Fields is what the id and retry fields of an SSE stream have set (HTML
// Living Standard section 9.2.6), as [ReadFields] reads it. The other
// framings have no fields.
type Fields struct {
	// LastEventID is the last event ID string, as an EventSource keeps it
	// across its connections: each dispatch of an event (at a blank line,
	// also one without data) sets it to the stream's last event ID buffer,
	// the value of its last id field, which a new stream starts empty.
	// When ReadFields yields a payload, it names that payload's event. An
	// id field without a value sets it to "".
	LastEventID string
	// IDs reports that an id field has come.
	IDs bool
	// Retry is the reconnection time the last retry field of ASCII digits
	// set (milliseconds, as the field gives it), or 0 when none has.
	Retry time.Duration
}

// ReadFields is [Read] with a bound on the gap between two events, and
// the id and retry fields of an SSE stream kept in f.
//
// The gap is the bytes read after one event (or from the start) before
// the next that are not part of an event's text: SSE comments, fields
// other than data, blank lines and the data lines of keep-alives, and
// white space between JSON Lines or array elements. An event whose payload
// is only white space (" ", "\t", "\r", "\n") is a keep-alive: its bytes
// are part of the gap. A gap longer than maxGap bytes fails with [ErrGap];
// maxGap <= 0 means 64 KiB (65536 bytes). It is found within a read buffer
// of the limit, so the bytes read without an event stay under maxGap plus
// 64 KiB.
//
// f is kept up to date as the fields are read: when ReadFields yields a
// payload, f holds what the fields set up to the end of that payload's
// event. f may be nil; its values at the start are the stream's starting
// ones.
func ReadFields(r io.Reader, format Format, maxSize, maxGap int, f *Fields) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		if err := Each(r, format, maxSize, maxGap, f, func(b []byte) bool { return yield(b, nil) }); err != nil {
			yield(nil, err)
		}
	}
}

// Each is [ReadFields] without an iterator: it gives each payload to each,
// until each returns false, and returns the error that ReadFields yields
// last, or nil at EOF and when each stopped. The payload is valid until
// each returns.
func Each(r io.Reader, format Format, maxSize, maxGap int, f *Fields, each func([]byte) bool) error {
	if maxSize <= 0 {
		maxSize = defaultMaxSize
	}
	if maxGap <= 0 {
		maxGap = defaultMaxGap
	}
	b := buffers.Get().(*streamBuffers)
	b.br.Reset(r)
	p := &reader{br: b.br, data: b.data[:0], max: maxSize, maxGap: maxGap, fields: f}
	defer func() { b.keep(p.data) }()
	err := p.run(format, each)
	if err == errStopped {
		err = p.overGap // nil unless emit stopped for it
	}
	if err != nil {
		return &Error{Event: p.n + 1, Err: err}
	}
	return nil
}

// streamBuffers are the buffers of one stream: the read buffer, and the
// buffer an SSE event's data lines are joined in.
type streamBuffers struct {
	br   *bufio.Reader
	data []byte
}

// keepData is the largest data buffer that a stream's buffers keep for the
// next stream.
const keepData = 64 << 10

// keep returns the buffers to the pool once their stream ends, with data,
// the data buffer as the stream grew it, unless it grew large. They keep
// nothing of the stream's reader.
func (b *streamBuffers) keep(data []byte) {
	b.br.Reset(nil)
	b.data = nil
	if cap(data) <= keepData {
		b.data = data[:0]
	}
	buffers.Put(b)
}

// buffers holds the buffers of streams that ended, so that a short stream
// costs no buffer of its own. A payload yielded from a buffer is valid
// until the next step, and so until its stream ends.
var buffers = sync.Pool{New: func() any { return &streamBuffers{br: bufio.NewReaderSize(nil, bufSize)} }}

// reader holds the state shared by the three framings.
type reader struct {
	br     *bufio.Reader
	data   []byte // SSE only: the data buffer (see readSSE), from the pool
	err    error  // sticky error from br, never cleared
	max    int
	n      int     // payloads yielded so far
	fields *Fields // SSE only; nil when the caller keeps no fields

	// The gap: bytes consumed since the last event that are not part of an
	// event's text. The framings set text while they consume the text of
	// an event that is not a keep-alive, which then does not count.
	gap, maxGap int
	text        bool
	overGap     error // why emit stopped the stream, if it did
}

// emit yields one payload to yield and reports whether to go on. An event that is
// not a keep-alive ends the gap; it is not yielded after a gap longer than
// the limit, which ends the stream.
func (p *reader) emit(b []byte, yield func([]byte) bool) bool {
	if err := p.checkGap(); err != nil {
		p.overGap = err
		return false
	}
	p.n++
	p.text = false
	if !blank(b) {
		p.gap = 0
	}
	return yield(b)
}

// checkGap returns ErrGap when the gap is longer than its limit.
func (p *reader) checkGap() error {
	if p.gap > p.maxGap {
		return &kindError{kind: ErrGap, msg: fmt.Sprintf("more than %d bytes without an event", p.maxGap)}
	}
	return nil
}

// blank reports whether b is a keep-alive's payload: only white space.
func blank(b []byte) bool { return firstText(b) == len(b) }

// firstText returns the index of the first byte of b that is not white
// space, or len(b).
func firstText(b []byte) int {
	for i, c := range b {
		if !isJSONSpace(c) {
			return i
		}
	}
	return len(b)
}

func (p *reader) tooLarge() error {
	return &kindError{kind: ErrTooLarge, msg: fmt.Sprintf("the event is longer than %d bytes", p.max)}
}

// buffered returns the bytes buffered in br, reading more if there are none.
// It returns an error (io.EOF at the end) only with no bytes, and ErrGap
// once the gap is longer than its limit.
func (p *reader) buffered() ([]byte, error) {
	if err := p.checkGap(); err != nil {
		return nil, err
	}
	if p.br.Buffered() == 0 {
		if p.err != nil {
			return nil, p.err
		}
		if _, err := p.br.Peek(1); err != nil {
			p.err = err
			return nil, err
		}
	}
	b, _ := p.br.Peek(p.br.Buffered())
	return b, nil
}

// peek returns up to n bytes without consuming them, recording any error.
func (p *reader) peek(n int) []byte {
	if p.err != nil {
		b, _ := p.br.Peek(p.br.Buffered())
		return b
	}
	b, err := p.br.Peek(n)
	if err != nil {
		p.err = err
	}
	return b
}

// discard consumes n buffered bytes, which are part of the gap unless
// p.text is set.
func (p *reader) discard(n int) {
	_, _ = p.br.Discard(n)
	if !p.text {
		p.gap += n
	}
}

func (p *reader) run(f Format, yield func([]byte) bool) error {
	if b := p.peek(3); bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")) {
		p.discard(3)
	}
	skipLine := false
	if f == Auto {
		var err error
		if f, skipLine, err = p.detect(); err != nil {
			return err
		}
	}
	switch f {
	case formatNone:
		return nil
	case SSE:
		return p.readSSE(skipLine, yield)
	case JSONLines:
		return p.readJSONLines(yield)
	case JSONArray:
		return p.readJSONArray(yield)
	}
	return fmt.Errorf("unknown format %d", int(f))
}

// detect skips leading whitespace and picks a format from the next byte,
// leaving that byte unread. skipLine reports that a space, tab or form feed
// was skipped on the current line: in SSE that line is then a field whose
// name starts with whitespace, which is ignored, so the SSE reader must skip
// the rest of it. An empty stream gives formatNone.
func (p *reader) detect() (f Format, skipLine bool, err error) {
	for {
		b, err := p.buffered()
		if err == io.EOF {
			return formatNone, false, nil
		}
		if err != nil {
			return 0, false, err
		}
		for i, c := range b {
			switch c {
			case ' ', '\t', '\f':
				skipLine = true
				continue
			case '\n', '\r':
				skipLine = false
				continue
			}
			p.discard(i)
			switch c {
			case '[':
				return JSONArray, false, nil
			case '{':
				return JSONLines, false, nil
			}
			return SSE, skipLine, nil
		}
		p.discard(len(b))
	}
}
