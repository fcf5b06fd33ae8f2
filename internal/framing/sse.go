// Server-sent events framing (HTML Living Standard section 9.2.6).

package framing

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
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
)

// readSSE implements the event stream interpretation of HTML section 9.2.6,
// keeping only the data buffer, but for the end of the stream (endSSE).
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
			return p.endSSE(data, state == sseData)
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
					if p.err != io.EOF {
						return p.err
					}
					if strings.HasPrefix("data: ", string(b)) {
						return io.ErrUnexpectedEOF // cut at the start of a data line
					}
					return p.endSSE(data, false)
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

// endSSE ends a stream at EOF. data is the data of an event that no blank
// line dispatched; inLine reports that its last data line has no line end
// either. The standard drops that event. Here, as in the reference client,
// it is dispatched when its data is one whole JSON text; any other data
// was cut short: io.ErrUnexpectedEOF. Empty data is nothing lost.
func (p *reader) endSSE(data []byte, inLine bool) error {
	if !inLine && len(data) > 0 {
		data = data[:len(data)-1] // the LF after the last whole data line
	}
	switch {
	case len(data) == 0:
		return nil
	case !json.Valid(data):
		return io.ErrUnexpectedEOF
	case !p.emit(data):
		return errStopped
	}
	return nil
}
