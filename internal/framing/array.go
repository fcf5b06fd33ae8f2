// JSON array framing: one array whose elements are the events (RFC 8259 section 5).

package framing

import (
	"encoding/json"
	"fmt"
	"io"
)

func isJSONSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// syntaxf returns an ErrSyntax failure of a JSON array stream.
func syntaxf(format string, args ...any) error {
	return &kindError{kind: ErrSyntax, msg: "json array: " + fmt.Sprintf(format, args...)}
}

// cutShort turns io.EOF inside the array into io.ErrUnexpectedEOF: the
// stream was cut short. It returns any other (I/O) error unchanged.
func cutShort(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// quoteByte shows one byte of input in an error message: a printable
// ASCII character in quotes, as the expected ones are, and any other byte
// by its value.
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7F {
		return "'" + string(c) + "'"
	}
	return fmt.Sprintf("byte 0x%02X", c)
}

// skipJSONSpace consumes JSON whitespace (RFC 8259 section 2) and returns the
// next byte without consuming it.
func (p *reader) skipJSONSpace() (byte, error) {
	for {
		b, err := p.buffered()
		if err != nil {
			return 0, err
		}
		for i, c := range b {
			if !isJSONSpace(c) {
				p.discard(i)
				return c, nil
			}
		}
		p.discard(len(b))
	}
}

// readJSONArray yields the elements of one JSON array (RFC 8259 section 5),
// one at a time, with their exact bytes. A stream that ends after the '['
// and before the ']' was cut short: io.ErrUnexpectedEOF.
func (p *reader) readJSONArray(yield func([]byte) bool) error {
	c, err := p.skipJSONSpace()
	if err == io.EOF {
		return syntaxf("unexpected end of stream, expected '['")
	}
	if err != nil {
		return err
	}
	if c != '[' {
		return syntaxf("stream is not an array: found %s, expected '['", quoteByte(c))
	}
	p.discard(1)
	if c, err = p.skipJSONSpace(); err != nil {
		return cutShort(err)
	}
	if c == ']' {
		p.discard(1)
		return p.arrayEnd()
	}
	var buf []byte
	for {
		p.text = true // an element is an event's text
		if buf, err = p.scanValue(buf[:0]); err != nil {
			return err
		}
		if !json.Valid(buf) {
			// Unmarshal into a RawMessage only validates, and says where.
			var raw json.RawMessage
			return &kindError{kind: ErrSyntax, msg: "json array: invalid element", cause: json.Unmarshal(buf, &raw)}
		}
		if !p.emit(buf, yield) {
			return errStopped
		}
		if c, err = p.skipJSONSpace(); err != nil {
			return cutShort(err)
		}
		p.discard(1)
		switch c {
		case ']':
			return p.arrayEnd()
		case ',':
			if c, err = p.skipJSONSpace(); err != nil {
				return cutShort(err)
			}
			if c == ']' {
				return syntaxf("found ']' after ',', expected a value")
			}
		default:
			return syntaxf("found %s after element, expected ',' or ']'", quoteByte(c))
		}
	}
}

// arrayEnd checks that only whitespace follows the closing bracket.
func (p *reader) arrayEnd() error {
	c, err := p.skipJSONSpace()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	return syntaxf("found %s after the closing ']'", quoteByte(c))
}

// isScalarByte reports whether c can occur in a JSON number, true, false or
// null.
func isScalarByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '+' || c == '-'
}

// maxArrayDepth is the deepest an element of a JSON array stream may nest:
// the limit of the encoding/json validator that checks each element.
const maxArrayDepth = 10000

// scanValue appends to buf the bytes of the JSON value that starts at the
// next byte, which is not whitespace. It finds the end of an object, array or
// string by counting brackets outside strings, and of a number or literal by
// the first byte that cannot be part of one; json.Valid checks the result
// afterwards. It fails with ErrTooLarge once the value exceeds max bytes.
func (p *reader) scanValue(buf []byte) ([]byte, error) {
	depth := 0
	inStr, esc := false, false
	scalar := false
	first := true
	for {
		b, err := p.buffered()
		if err != nil {
			return nil, cutShort(err) // even a scalar: "[12" may have been "[123]"
		}
		if first {
			first = false
			scalar = b[0] != '{' && b[0] != '[' && b[0] != '"'
			if scalar && !isScalarByte(b[0]) {
				return nil, syntaxf("found %s, expected a value", quoteByte(b[0]))
			}
		}
		end := -1 // length of the value's tail within b, once found
	scan:
		for i, c := range b {
			switch {
			case scalar:
				if !isScalarByte(c) {
					end = i
					break scan
				}
			case inStr:
				switch {
				case esc:
					esc = false
				case c == '\\':
					esc = true
				case c == '"':
					inStr = false
					if depth == 0 {
						end = i + 1
						break scan
					}
				}
			case c == '"':
				inStr = true
			case c == '{' || c == '[':
				if depth++; depth > maxArrayDepth {
					return nil, &kindError{kind: ErrTooLarge, msg: fmt.Sprintf("json array: an element nests more than %d deep", maxArrayDepth)}
				}
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					end = i + 1
					break scan
				}
			}
		}
		chunk := b
		if end >= 0 {
			chunk = b[:end]
		}
		if len(buf)+len(chunk) > p.max {
			return nil, p.tooLarge()
		}
		buf = append(buf, chunk...)
		p.discard(len(chunk))
		if end >= 0 {
			return buf, nil
		}
	}
}
