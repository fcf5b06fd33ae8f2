// Server-sent events framing (HTML Living Standard section 9.2.6).

package framing

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

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
	sseID               // inside the value of an id field
	sseRetry            // inside the value of a retry field
)

// field returns the line state for a line that begins with b and whose
// value begins after skip bytes, when it is an id or retry field: the name
// alone, or followed by a colon and one optional space.
func field(b []byte, name string, state int) (int, int, bool) {
	n := len(name)
	if len(b) <= n || string(b[:n]) != name {
		return 0, 0, false
	}
	switch b[n] {
	case '\n', '\r':
		return state, n, true
	case ':':
		if len(b) > n+1 && b[n+1] == ' ' {
			return state, n + 2, true
		}
		return state, n + 1, true
	}
	return 0, 0, false
}

// readSSE implements the event stream interpretation of HTML section 9.2.6,
// keeping only the data buffer, but for the end of the stream (endSSE).
func (p *reader) readSSE(skipLine bool, yield func([]byte) bool) error {
	data := p.data // data buffer; len(data) minus its final LF never exceeds max
	defer func() { p.data = data }()
	dataText := false // data holds more than white space: the event is no keep-alive
	var value []byte  // the value of an id or retry field being read, when p.fields is kept
	valueLen := 0     // the length of that value
	id := ""          // the last event ID buffer, which a new stream starts empty
	state := sseLineStart
	if skipLine {
		state = sseSkip
	}
	lineLen := 0    // bytes of the skipped line so far
	skipLF := false // the last line ended in CR, so a following LF is part of it
	for {
		b, err := p.buffered()
		if err == io.EOF {
			return p.endSSE(data, state == sseData, id, yield)
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
			// A line is part of the gap, but for the data lines of an
			// event with text, and the blank line that dispatches it.
			p.text = dataText
			// Classifying the line needs its first 6 bytes ("data: ") or
			// its end.
			if len(b) < 6 && lineEnd(b) < 0 {
				b = p.peek(6)
				if len(b) < 6 && lineEnd(b) < 0 {
					if p.err != io.EOF {
						return p.err
					}
					if strings.HasPrefix("data: ", string(b)) {
						return io.ErrUnexpectedEOF // cut at the start of a data line
					}
					return p.endSSE(data, false, id, yield)
				}
			}
			switch c := b[0]; {
			case c == '\n' || c == '\r':
				// Blank line: dispatch.
				p.discard(1)
				skipLF = c == '\r'
				if p.fields != nil {
					p.fields.LastEventID = id
				}
				if len(data) > 0 {
					if !p.emit(data[:len(data)-1], yield) {
						return errStopped
					}
					data, dataText = data[:0], false
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
				next, skip, ok := field(b, "id", sseID)
				if !ok {
					next, skip, ok = field(b, "retry", sseRetry)
				}
				p.text = false // an id or retry line, a comment or another field
				if ok {
					p.discard(skip)
					state, value, valueLen = next, value[:0], 0
					break
				}
				// Comment (":"), or another field.
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
			if !dataText {
				// White space before an event's text is part of the gap.
				if j := firstText(v); j < len(v) {
					dataText, p.text = true, true
					p.gap += j
				}
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
		case sseID, sseRetry:
			i := lineEnd(b)
			v := b
			if i >= 0 {
				v = b[:i]
			}
			if valueLen += len(v); valueLen-lineAllowance > p.max {
				return p.tooLarge()
			}
			if p.fields != nil { // else the value is not kept
				value = append(value, v...)
			}
			if i < 0 {
				p.discard(len(b))
				continue
			}
			skipLF = b[i] == '\r'
			p.discard(i + 1)
			if state == sseID {
				if p.fields != nil && bytes.IndexByte(value, 0) < 0 { // an id with NUL is ignored
					id = string(value)
					p.fields.IDs = true
				}
			} else {
				p.setRetry(value)
			}
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

// endSSE ends a stream at EOF. data is the data of an event that no blank
// line dispatched; inLine reports that its last data line has no line end
// either; id is the last event ID buffer. The standard drops that event.
// Here, as in the reference client, it is dispatched, with its id, when
// its data is one whole JSON text; any other data was cut short:
// io.ErrUnexpectedEOF. Empty data is nothing lost.
func (p *reader) endSSE(data []byte, inLine bool, id string, yield func([]byte) bool) error {
	if !inLine && len(data) > 0 {
		data = data[:len(data)-1] // the LF after the last whole data line
	}
	switch {
	case len(data) == 0:
		return nil
	case !json.Valid(data):
		return io.ErrUnexpectedEOF
	}
	if p.fields != nil {
		p.fields.LastEventID = id
	}
	if !p.emit(data, yield) {
		return errStopped
	}
	return nil
}

// setRetry sets the reconnection time from the value of a retry field,
// when it is ASCII digits only; other values are ignored (WHATWG). A value
// too large for a time.Duration is the largest one.
func (p *reader) setRetry(value []byte) {
	if p.fields == nil || len(value) == 0 {
		return
	}
	for _, c := range value {
		if c < '0' || c > '9' {
			return
		}
	}
	ms, err := strconv.ParseInt(string(value), 10, 64)
	if err != nil || ms > int64(math.MaxInt64/time.Millisecond) {
		p.fields.Retry = math.MaxInt64
		return
	}
	p.fields.Retry = time.Duration(ms) * time.Millisecond
}
