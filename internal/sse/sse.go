package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
)

// Format names the framing of an event stream. The zero value is
// [FormatAuto].
type Format int

const (
	// FormatAuto picks the framing from the first byte that is not ASCII
	// whitespace (space, tab, LF, FF, CR), after an optional UTF-8 byte
	// order mark (EF BB BF): "[" selects [FormatJSONArray], "{" selects
	// [FormatJSONLines], and anything else selects [FormatSSE]. A stream
	// that is empty or all whitespace yields no payloads.
	FormatAuto Format = iota

	// FormatSSE is a server-sent event stream, interpreted as in HTML Living
	// Standard section 9.2.6 "Interpreting an event stream": lines end in
	// LF, CR or CRLF; a leading BOM is dropped; the values of the "data"
	// fields of one event are joined with LF; a blank line dispatches the
	// event. Only data is kept: "event", "id", "retry", comments and unknown
	// fields are skipped. An event that is not ended by a blank line before
	// EOF is dropped, as the standard says. Events with no data field are
	// not yielded; an event whose data is empty yields an empty payload.
	// Bytes pass through as they are: unlike the standard, invalid UTF-8 is
	// not replaced with U+FFFD (the JSON parser of the caller judges it).
	FormatSSE

	// FormatJSONLines is one payload per line (JSON Lines): lines end in LF,
	// each line is trimmed of ASCII whitespace (so CRLF works), blank lines
	// are skipped, and a last line without LF still counts. The lines are
	// not checked to be JSON.
	FormatJSONLines

	// FormatJSONArray is one JSON array (RFC 8259 section 5) whose elements
	// are the payloads, read one element at a time. Each element is yielded
	// with its exact bytes and checked to be a JSON value; a stream that is
	// not one array (an empty stream included), or has anything but
	// whitespace after it, fails with [ErrSyntax]. Elements are yielded as
	// they are read, so an error at the end of the array comes after them.
	FormatJSONArray
)

const (
	// formatNone is what detection returns for an empty stream.
	formatNone Format = -1

	// defaultMaxSize is the payload limit used when maxSize <= 0: 16 MiB.
	defaultMaxSize = 16 << 20

	// bufSize is the size of the read buffer.
	bufSize = 64 << 10

	// lineAllowance is how much longer than maxSize a skipped SSE line
	// (comment, id, event, retry or unknown field) may be before it fails
	// with ErrTooLarge. It covers the field name and separator.
	lineAllowance = 64
)

// errStopped tells Read that the consumer stopped ranging; nothing is yielded.
var errStopped = errors.New("aguistate: stopped")

// Read returns an iterator over the raw payloads in r: the JSON text of each
// AG-UI event, framed as format says (see [Format]). maxSize is the largest
// payload in bytes; maxSize <= 0 means 16 MiB (16777216 bytes).
//
// The iterator stops at the first error, which it yields once as (nil, err),
// where err is an [*Error] wrapping [ErrTooLarge], [ErrSyntax] or the error
// returned by r. It never yields a payload together with an error. io.EOF
// from r is success: the iteration just ends. Read does not reconnect, retry,
// or honour the SSE "retry" and "id" fields.
//
// The yielded slice is a view into a reused buffer: it is valid only until
// the next iteration step. Copy or parse it before continuing. Payloads are
// never nil, but may be empty (an SSE event whose data is empty).
//
// Memory stays near maxSize plus a 64 KiB read buffer, however long a line
// or element is. A payload longer than maxSize fails with [ErrTooLarge], and
// so does an SSE line of another field longer than maxSize plus 64 bytes.
//
// Range over the iterator once: it reads r through its own buffer, so a
// second range starts wherever r was left, not at the next payload.
func Read(r io.Reader, format Format, maxSize int) iter.Seq2[[]byte, error] {
	if maxSize <= 0 {
		maxSize = defaultMaxSize
	}
	return func(yield func([]byte, error) bool) {
		p := &reader{br: bufio.NewReaderSize(r, bufSize), max: maxSize, yield: yield}
		if err := p.run(format); err != nil && err != errStopped {
			yield(nil, &Error{Event: p.n + 1, Err: err})
		}
	}
}

// reader holds the state shared by the three framings.
type reader struct {
	br    *bufio.Reader
	err   error // sticky error from br, never cleared
	max   int
	n     int // payloads yielded so far
	yield func([]byte, error) bool
}

// emit yields one payload and reports whether to go on.
func (p *reader) emit(b []byte) bool {
	p.n++
	return p.yield(b, nil)
}

func (p *reader) tooLarge() error {
	return fmt.Errorf("%w: exceeds %d bytes", ErrTooLarge, p.max)
}

// buffered returns the bytes buffered in br, reading more if there are none.
// It returns an error (io.EOF at the end) only with no bytes.
func (p *reader) buffered() ([]byte, error) {
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

// discard consumes n buffered bytes.
func (p *reader) discard(n int) {
	_, _ = p.br.Discard(n)
}

func (p *reader) run(f Format) error {
	if b := p.peek(3); bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")) {
		p.discard(3)
	}
	skipLine := false
	if f == FormatAuto {
		var err error
		if f, skipLine, err = p.detect(); err != nil {
			return err
		}
	}
	switch f {
	case formatNone:
		return nil
	case FormatSSE:
		return p.readSSE(skipLine)
	case FormatJSONLines:
		return p.readJSONLines()
	case FormatJSONArray:
		return p.readJSONArray()
	}
	return fmt.Errorf("aguistate: unknown format %d", int(f))
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
				return FormatJSONArray, false, nil
			case '{':
				return FormatJSONLines, false, nil
			}
			return FormatSSE, skipLine, nil
		}
		p.discard(len(b))
	}
}

// lineEnd returns the index of the first CR or LF in b, or -1.
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	s := b
	if i >= 0 {
		s = b[:i]
	}
	if j := bytes.IndexByte(s, '\r'); j >= 0 {
		return j
	}
	return i
}

// SSE line states.
const (
	sseLineStart = iota // at the first byte of a line
	sseData             // inside the value of a data field
	sseSkip             // inside a line that is ignored
)

// readSSE implements the event stream interpretation of HTML section 9.2.6,
// keeping only the data buffer.
func (p *reader) readSSE(skipLine bool) error {
	var data []byte // data buffer; len(data) minus its final LF never exceeds max
	state := sseLineStart
	if skipLine {
		state = sseSkip
	}
	lineLen := 0    // bytes of the skipped line so far
	skipLF := false // the last line ended in CR, so a following LF is part of it
	for {
		b, err := p.buffered()
		if err == io.EOF {
			return nil // an event without its blank line is dropped
		}
		if err != nil {
			return err
		}
		if skipLF {
			skipLF = false
			if b[0] == '\n' {
				p.discard(1)
				continue
			}
		}
		switch state {
		case sseLineStart:
			// Classifying the line needs its first 6 bytes ("data: ") or
			// its end.
			if len(b) < 6 && lineEnd(b) < 0 {
				b = p.peek(6)
				if len(b) < 6 && lineEnd(b) < 0 {
					if p.err == io.EOF {
						return nil // unterminated last line: event dropped
					}
					return p.err
				}
			}
			switch c := b[0]; {
			case c == '\n' || c == '\r':
				// Blank line: dispatch.
				p.discard(1)
				skipLF = c == '\r'
				if len(data) > 0 {
					if !p.emit(data[:len(data)-1]) {
						return errStopped
					}
					data = data[:0]
				}
			case len(b) >= 5 && string(b[:4]) == "data" && (b[4] == ':' || b[4] == '\n' || b[4] == '\r'):
				skip := 4 // "data" alone: empty value
				if b[4] == ':' {
					skip = 5
					if len(b) > 5 && b[5] == ' ' {
						skip = 6
					}
				}
				p.discard(skip)
				state = sseData
			default:
				// Comment (":"), or a field other than data.
				state, lineLen = sseSkip, 0
			}
		case sseData:
			i := lineEnd(b)
			v := b
			if i >= 0 {
				v = b[:i]
			}
			if len(data)+len(v) > p.max {
				return p.tooLarge()
			}
			data = append(data, v...)
			if i < 0 {
				p.discard(len(b))
				continue
			}
			data = append(data, '\n')
			skipLF = b[i] == '\r'
			p.discard(i + 1)
			state = sseLineStart
		case sseSkip:
			i := lineEnd(b)
			k := i
			if i < 0 {
				k = len(b)
			}
			lineLen += k
			if lineLen-lineAllowance > p.max {
				return p.tooLarge()
			}
			if i < 0 {
				p.discard(len(b))
				continue
			}
			skipLF = b[i] == '\r'
			p.discard(i + 1)
			state = sseLineStart
		}
	}
}
