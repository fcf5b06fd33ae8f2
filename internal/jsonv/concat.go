// Concat: strings that grow by small pieces at the cost of the piece.

package jsonv

import (
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Concat appends to strings that grow by small pieces (a message's text as
// it streams) in time proportional to the piece, not to the whole string.
//
// A string it makes covers the start of a byte buffer with room to grow,
// and knows the buffer. The buffer's length marks how far it is used, and
// Concat only ever writes past it, so no string it returned ever changes:
// older values of the message keep seeing their own bytes, and readers need
// no lock. A string that is not at the end of its buffer (it was extended
// already, by an event that was then rejected), that another Concat made
// (two Consumers that share a value, a clone and its original, may append
// to it at once), or that did not come from a Concat is copied into a new
// buffer instead: only the Concat that made a buffer writes into it.
// Nothing else holds the buffers: one is freed with the last string that
// uses it, and is at most half as long again as its longest string, and 16
// bytes.
//
// A UTF-16 surrogate pair split between two pieces joins into one code
// point, as it does in the JavaScript strings AG-UI producers stream, so
// that the text equals what a parser would make of the pair. The high half
// is kept beside the buffer until the next piece shows whether it pairs, so
// that joining costs the piece too.
//
// The zero Concat is ready to use. It is not safe for concurrent use, and
// must not be copied after first use.
type Concat struct {
	_ byte // a Concat has an address of its own, which its buffers name
}

// growBuf is the buffer of strings made by one Concat.
type growBuf struct {
	buf []byte // len: the bytes in use
	by  *Concat
}

// grown is a String made by Concat: text covers the start of buf. A text
// that ends in a lone high surrogate keeps it in hi rather than in buf (its
// text is text followed by hi), so that a low surrogate in the next piece
// can join it without touching bytes that text covers.
type grown struct {
	scalar
	buf *growBuf
	hi  rune
}

// Append returns a String node holding s's text followed by piece. s must be
// a String node, or nil for none.
func (c *Concat) Append(s *Node, piece string) *Node {
	if s == nil {
		return NewString(piece)
	}
	if piece == "" {
		return s
	}
	head, hi := s.stringParts()
	size := s.Size() // of `"` head hi `"`
	if hi != 0 {
		size -= 6 // \uXXXX
	}
	// What follows head: mid, then rest.
	var midBuf [4]byte
	mid, rest, cut := midBuf[:0], piece, 0
	if hi != 0 {
		if lo, ok := leadingLow(piece); ok {
			mid, rest = utf8.AppendRune(mid, utf16.DecodeRune(hi, lo)), piece[3:]
		} else {
			mid = appendWTF8(mid, hi)
		}
	} else if r, ok := surrogatePair(head, piece); ok {
		cut, size = 3, size-6
		mid, rest = utf8.AppendRune(mid, r), piece[3:]
	}
	var pending rune
	if r, ok := trailingHigh(rest); ok {
		pending, rest = r, rest[:len(rest)-3]
	}
	size += StringSize(rest) - 2
	switch len(mid) {
	case 3: // a lone surrogate, written \uXXXX
		size += 6
	case 4: // a joined pair
		size += 4
	}
	if pending != 0 {
		size += 6
	}
	g := c.bufferOf(s, head)
	n := len(head) - cut + len(mid) + len(rest)
	if g == nil || cut > 0 || cap(g.buf) < n {
		buf := make([]byte, 0, n+n/2+16)
		g = &growBuf{buf: append(buf, head[:len(head)-cut]...), by: c}
	}
	g.buf = append(append(g.buf, mid...), rest...)
	text := unsafe.String(unsafe.SliceData(g.buf), len(g.buf))
	h := header(String, size)
	h.meta |= grownFlag
	return &(&grown{scalar{h, text}, g, pending}).Node
}

// bufferOf returns the buffer that s, of text head, was made in when c made
// it and it is at the buffer's end; otherwise nil.
func (c *Concat) bufferOf(s *Node, head string) *growBuf {
	if s.meta&grownFlag == 0 {
		return nil
	}
	g := (*grown)(unsafe.Pointer(s)).buf
	if g.by != c || len(g.buf) != len(head) {
		return nil
	}
	return g
}

// surrogatePair reports whether a ends with a high surrogate and b starts
// with a low one (each in its three-byte WTF-8 form, see Parse), and
// returns the code point they make together.
func surrogatePair(a, b string) (rune, bool) {
	hi, ok := trailingHigh(a)
	if !ok {
		return 0, false
	}
	lo, ok := leadingLow(b)
	if !ok {
		return 0, false
	}
	return utf16.DecodeRune(hi, lo), true
}

// trailingHigh returns the high surrogate that s ends with, in WTF-8.
func trailingHigh(s string) (rune, bool) {
	if len(s) < 3 || s[len(s)-3] != 0xED {
		return 0, false
	}
	r := 0xD000 | rune(s[len(s)-2]&0x3F)<<6 | rune(s[len(s)-1]&0x3F)
	return r, r >= 0xD800 && r <= 0xDBFF
}

// leadingLow returns the low surrogate that s starts with, in WTF-8.
func leadingLow(s string) (rune, bool) {
	if len(s) < 3 || s[0] != 0xED {
		return 0, false
	}
	r := 0xD000 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F)
	return r, r >= 0xDC00 && r <= 0xDFFF
}
