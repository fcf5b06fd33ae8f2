// Concat: strings that grow by small pieces at the cost of the piece.

package jsonv

import (
	"unicode/utf16"
	"unsafe"
)

// Concat appends to strings that grow by small pieces (a message's text as
// it streams) in time proportional to the piece, not to the whole string.
//
// It keeps, for each string it made, a byte buffer with room to grow, whose
// length marks how far the buffer is used. A string it made covers
// buf[:len], and Concat only ever writes at buf[len:], so no string it
// returned ever changes: older values of the message keep seeing exactly
// their own bytes, and readers need no lock. When the string to extend is
// not the one at the end of its buffer (it was extended already, by an
// event that was then rejected, or it did not come from Concat), it is
// copied into a new buffer instead. The zero Concat is ready to use; it is
// not safe for concurrent use.
type Concat struct {
	bufs map[*byte][]byte // buffer start → the buffer, length = bytes in use
}

// maxBuffers bounds how many growing strings a Concat follows at once;
// past it, one it follows (chosen by map order) is forgotten.
const maxBuffers = 1024

// Append returns a String node holding s's text followed by piece. s must be
// a String node, or nil for none.
func (c *Concat) Append(s *Node, piece string) *Node {
	if s == nil {
		return NewString(piece)
	}
	old := s.str
	if r, ok := surrogatePair(old, piece); ok {
		// A UTF-16 pair split between two pieces joins into one code point,
		// as it does in the JavaScript strings AG-UI producers stream, so
		// that the text equals what a parser would make of it.
		return NewString(old[:len(old)-3] + string(r) + piece[3:])
	}
	var buf []byte
	if len(old) > 0 {
		if b, ok := c.bufs[unsafe.StringData(old)]; ok && len(b) == len(old) {
			buf = b
		}
	}
	if buf == nil || cap(buf)-len(buf) < len(piece) {
		grown := make([]byte, len(old), 2*(len(old)+len(piece))+16)
		copy(grown, old)
		if buf != nil {
			delete(c.bufs, unsafe.SliceData(buf))
		}
		buf = grown
	}
	buf = append(buf, piece...)
	if c.bufs == nil {
		c.bufs = make(map[*byte][]byte)
	}
	for k := range c.bufs {
		if len(c.bufs) < maxBuffers {
			break
		}
		delete(c.bufs, k)
	}
	c.bufs[unsafe.SliceData(buf)] = buf
	text := unsafe.String(unsafe.SliceData(buf), len(buf))
	return &Node{kind: String, str: text, size: s.size + StringSize(piece) - 2}
}

// surrogatePair reports whether a ends with a high surrogate and b starts
// with a low one (each in its three-byte WTF-8 form, see Parse), and
// returns the code point they make together.
func surrogatePair(a, b string) (rune, bool) {
	if len(a) < 3 || len(b) < 3 || a[len(a)-3] != 0xED || b[0] != 0xED {
		return 0, false
	}
	hi := rune(a[len(a)-2]&0x3F)<<6 | rune(a[len(a)-1]&0x3F) | 0xD000
	lo := rune(b[1]&0x3F)<<6 | rune(b[2]&0x3F) | 0xD000
	if hi < 0xD800 || hi > 0xDBFF || lo < 0xDC00 || lo > 0xDFFF {
		return 0, false
	}
	return utf16.DecodeRune(hi, lo), true
}
