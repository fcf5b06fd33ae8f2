// JSON Lines framing: one event per line.

package framing

import (
	"bytes"
	"encoding/json"
	"io"
)

// isASCIISpace reports whether c is ASCII whitespace as the WHATWG Infra
// standard defines it: tab, LF, FF, CR or space.
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

func trimRightSpace(b []byte) []byte {
	for len(b) > 0 && isASCIISpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func allSpace(b []byte) bool {
	for _, c := range b {
		if !isASCIISpace(c) {
			return false
		}
	}
	return true
}

// readJSONLines yields each non-blank LF-terminated line, trimmed of ASCII
// whitespace. A last line without LF is yielded when it is valid JSON, and
// is taken as cut short (io.ErrUnexpectedEOF) when it is not. A line that fits in the read buffer is yielded straight from
// it; a longer one is gathered in buf, which never holds more than max bytes:
// bytes past max are dropped if they are whitespace (they can only be
// trailing whitespace of a line that fits) and fail the line otherwise.
func (p *reader) readJSONLines(yield func([]byte) bool) error {
	var buf []byte
	inLine := false // gathering a line that spans buffer fills
	vlen := 0       // length of the gathered line, counting dropped bytes
	for {
		b, err := p.buffered()
		if err != nil {
			if err != io.EOF {
				return err
			}
			if inLine {
				line := trimRightSpace(buf)
				if !json.Valid(line) {
					return io.ErrUnexpectedEOF // the last line was cut short
				}
				if !p.emit(line, yield) {
					return errStopped
				}
			}
			return nil
		}
		if !inLine {
			k := 0
			for k < len(b) && isASCIISpace(b[k]) {
				k++
			}
			if k == len(b) {
				p.discard(k)
				continue
			}
			b = b[k:]
			p.discard(k) // leading white space is part of the gap
			p.text = true
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				line := trimRightSpace(b[:i])
				if len(line) > p.max {
					return p.tooLarge()
				}
				p.gap += i - len(line) // trailing white space is part of the gap
				// The line stays in the buffer until the next read, after
				// the yield.
				p.discard(i + 1)
				if !p.emit(line, yield) {
					return errStopped
				}
				continue
			}
			inLine, buf, vlen = true, buf[:0], 0
		}
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if room := max(p.max-vlen, 0); len(chunk) > room {
			if !allSpace(chunk[room:]) {
				return p.tooLarge()
			}
			buf = append(buf, chunk[:room]...)
			p.gap += len(chunk) - room // white space dropped from the line
		} else {
			buf = append(buf, chunk...)
		}
		vlen += len(chunk)
		if i < 0 {
			p.discard(len(b))
			continue
		}
		inLine = false
		p.discard(i + 1)
		line := trimRightSpace(buf)
		p.gap += len(buf) - len(line)
		if !p.emit(line, yield) {
			return errStopped
		}
	}
}
