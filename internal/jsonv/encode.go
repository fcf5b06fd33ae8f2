// Writing a value as compact JSON text.

package jsonv

const hexDigits = "0123456789abcdef"

// Append appends the compact JSON text of n to dst: numbers as their literal
// text, members in order, strings with only the escapes RFC 8259 requires
// (quotation mark, reverse solidus, control characters) plus \u escapes for
// lone surrogates.
func Append(dst []byte, n *Node) []byte {
	switch n.Kind() {
	case Null:
		return append(dst, "null"...)
	case False:
		return append(dst, "false"...)
	case True:
		return append(dst, "true"...)
	case Number:
		return append(dst, n.scalar().text...)
	case String:
		head, hi := n.stringParts()
		if hi == 0 {
			return AppendString(dst, head)
		}
		dst = AppendString(dst, head)
		return appendEscape(dst[:len(dst)-1], hi)
	case Array:
		if n.isPacked() {
			return append(dst, n.packedText()...)
		}
		dst = append(dst, '[')
		first := true
		for run := range n.array().elems.Chunks() {
			for _, e := range run {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = Append(dst, e)
			}
		}
		return append(dst, ']')
	default:
		if n.isPacked() {
			return append(dst, n.packedText()...)
		}
		dst = append(dst, '{')
		first := true
		for run := range n.object().members.Chunks() {
			for _, m := range run {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = AppendString(dst, m.Key)
				dst = append(dst, ':')
				dst = Append(dst, m.Value)
			}
		}
		return append(dst, '}')
	}
}

// appendEscape appends the \u escape of a surrogate and the closing quote.
func appendEscape(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF], '"')
}

// Marshal returns the compact JSON text of n.
func Marshal(n *Node) []byte { return Append(nil, n) }

// AppendString appends s as a JSON string literal.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(append(dst, s[start:i]...), '\\', c)
			start = i + 1
		case c < 0x20:
			dst = append(dst, s[start:i]...)
			switch c {
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			start = i + 1
		case c == 0xED && i+2 < len(s) && s[i+1] >= 0xA0:
			// A WTF-8 surrogate, which only a \u escape can have made.
			r := rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
			i += 2
			start = i + 1
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// StringSize returns the length of s as a JSON string literal written by
// [AppendString], quotes included.
func StringSize(s string) int {
	size := 2 + len(s)
	for i := 0; i < len(s); i++ {
		switch x := stringExtra[s[i]]; x {
		case 0:
		case surrogateLead:
			if i+2 < len(s) && s[i+1] >= 0xA0 {
				size += 3 // three bytes become \uXXXX
				i += 2
			}
		default:
			size += int(x)
		}
	}
	return size
}

// surrogateLead marks 0xED in stringExtra: it starts the three bytes of a
// WTF-8 surrogate, which AppendString writes as six, when the next byte is
// 0xA0 or more.
const surrogateLead = 0xFF

// stringExtra holds, for each byte, how many bytes more than itself
// AppendString writes for it: 1 for a two-byte escape, 5 for \u00XX,
// surrogateLead for 0xED, 0 for the rest. StringSize reads one entry a
// byte where seven comparisons would do.
var stringExtra = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = 5
	}
	for _, c := range "\"\\\n\r\t\b\f" {
		t[c] = 1
	}
	t[0xED] = surrogateLead
	return t
}()
