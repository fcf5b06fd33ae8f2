// Packed containers: a small array or object held as its compact JSON text,
// read by scanning it and edited by splicing it.

package jsonv

import (
	"iter"
	"strconv"
	"unsafe"
)

// packMax is the largest compact text, in bytes, of a container that
// [Parse] packs: one allocation of its text and an 8-byte header, where a
// tree costs a node, a leaf and a node per child. Reading a child scans
// at most packMax bytes; an edit splices the text, or unpacks it when the
// result would be larger.
const packMax = 256

// A packed container's meta holds, above the kind and packedFlag, its
// size in bytes of text (24 bits), its number of children (16 bits) and
// its depth (20 bits). Its text follows the meta in the same allocation.
const (
	packedFlag  = 8 // an Array or Object held as its text (grownFlag is a String's)
	countShift  = 28
	depthShift  = 44
	packedSizes = 1<<24 - 1
)

// isPacked reports whether n is a packed array or object.
func (n *Node) isPacked() bool { return n.meta&packedFlag != 0 && n.Kind() >= Array }

func (n *Node) packedSize() int  { return int(n.meta >> auxShift & packedSizes) }
func (n *Node) packedCount() int { return int(n.meta >> countShift & 0xFFFF) }
func (n *Node) packedDepth() int { return int(n.meta >> depthShift) }

// packedText returns the compact JSON text of a packed container.
func (n *Node) packedText() string {
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(n), 8)), n.packedSize())
}

// newPacked returns a packed container of compact JSON text, an array or
// an object of count (at least one) children, of depth depth. The header
// and the text are one allocation, which holds no pointers.
func newPacked(text string, count, depth int) *Node {
	n, room := allocPacked(len(text))
	copy(room, text)
	n.setPacked(len(text), count, depth)
	return n
}

// allocPacked returns a packed node with room for size bytes of text,
// which its caller writes, then sets the meta of (setPacked).
func allocPacked(size int) (*Node, []byte) {
	buf := make([]uint64, 1+(size+7)/8)
	n := (*Node)(unsafe.Pointer(&buf[0]))
	return n, unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(n), 8)), size)
}

// setPacked sets the meta of the packed n, whose text of size bytes is
// written.
func (n *Node) setPacked(size, count, depth int) {
	k := Array
	if *(*byte)(unsafe.Add(unsafe.Pointer(n), 8)) == '{' {
		k = Object
	}
	n.meta = uint64(k) | packedFlag | uint64(size)<<auxShift | uint64(count)<<countShift | uint64(depth)<<depthShift
}

// packText returns text, the compact JSON text of a container, packed,
// measuring its children and depth.
func packText(text string) *Node {
	count, depth := measureText(text)
	return newPacked(text, count, depth)
}

// measureText returns the number of children and the depth of the
// container whose compact text is text.
func measureText(text string) (count, depth int) {
	level := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"':
			i = stringEnd(text, i) - 1
		case '[', '{':
			if level++; level > depth {
				depth = level
			}
		case ']', '}':
			level--
		case ',':
			if level == 1 {
				count++
			}
		}
	}
	return count + 1, depth
}

// stringEnd returns the position after the string literal that starts at
// i of compact text s.
func stringEnd(s string, i int) int {
	for i++; ; i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// valueEnd returns the position after the value that starts at i of
// compact text s.
func valueEnd(s string, i int) int {
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '[', '{':
		level := 0
		for ; ; i++ {
			switch s[i] {
			case '"':
				i = stringEnd(s, i) - 1
			case '[', '{':
				level++
			case ']', '}':
				if level--; level == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(s) && s[i] != ',' && s[i] != ']' && s[i] != '}' {
		i++
	}
	return i
}

// span is where one child of a packed container is in its text: its name
// literal (objects only) from key to val-1, and its value from val to end.
type span struct{ key, val, end int }

// spans yields the spans of the children of the packed container n, in
// order.
func (n *Node) spans() iter.Seq[span] { return spansIn(n.packedText(), 0) }

// spansIn yields the spans of the children of the container that starts
// at a of compact text s, in order.
func spansIn(s string, a int) iter.Seq[span] {
	return func(yield func(span) bool) {
		obj := s[a] == '{'
		for i := a + 1; s[i] != ']' && s[i] != '}'; i++ {
			sp := span{key: i, val: i}
			if obj {
				sp.val = stringEnd(s, i) + 1
			}
			sp.end = valueEnd(s, sp.val)
			if !yield(sp) {
				return
			}
			i = sp.end
			if s[i] != ',' {
				return
			}
		}
	}
}

// locate returns where in the text of the packed n the value is that
// tokens name, and false when one names nothing (Child says why). It
// scans the text before the value and the value, not what follows the
// containers it enters.
func (n *Node) locate(tokens []string) (from, to int, ok bool) {
	s := n.packedText()
	for _, t := range tokens {
		k := -1
		switch s[from] {
		case '{':
		case '[':
			if !IsArrayIndex(t) || len(t) > 3 {
				return 0, 0, false
			}
			k, _ = strconv.Atoi(t)
		default:
			return 0, 0, false
		}
		i, found := from+1, false
		for s[i] != ']' && s[i] != '}' {
			val := i
			if k < 0 {
				val = stringEnd(s, i) + 1
			}
			if k < 0 && literalIs(s[i:val-1], t) || k == 0 {
				from, found = val, true
				break
			}
			k--
			if i = valueEnd(s, val); s[i] != ',' {
				break
			}
			i++
		}
		if !found {
			return 0, 0, false
		}
	}
	return from, valueEnd(s, from), true
}

// spanAt returns the span of child i, in [0, Len), of the packed n.
func (n *Node) spanAt(i int) span {
	for sp := range n.spans() {
		if i == 0 {
			return sp
		}
		i--
	}
	panic("jsonv: position out of range")
}

// findSpan returns the position and span of the member called name of the
// packed object n, or -1.
func (n *Node) findSpan(name string) (int, span) {
	s := n.packedText()
	i := 0
	for sp := range n.spans() {
		if literalIs(s[sp.key:sp.val-1], name) {
			return i, sp
		}
		i++
	}
	return -1, span{}
}

// literalIs reports whether the string literal lit is the text s.
func literalIs(lit, s string) bool {
	body := lit[1 : len(lit)-1]
	if len(body) == len(s) {
		return body == s // a literal as long as its text has no escapes
	}
	return len(body) > len(s) && decodeLiteral(lit) == s
}

// decodeLiteral returns the text of the string literal lit.
func decodeLiteral(lit string) string {
	body := lit[1 : len(lit)-1]
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' {
			return decodeValue(lit).Text()
		}
	}
	return body
}

// decodeValue returns the value of the compact text s, which a packed
// container holds: a scalar shares the text, a container is packed anew.
func decodeValue(s string) *Node {
	switch s {
	case "[]":
		return &emptyArray.Node
	case "{}":
		return &emptyObject.Node
	}
	switch s[0] {
	case '[', '{':
		return packText(s)
	case 't':
		return &trueNode
	case 'f':
		return &falseNode
	case 'n':
		return &nullNode
	case '"':
		body := s[1 : len(s)-1]
		for i := 0; i < len(body); i++ {
			if body[i] == '\\' {
				v, err := Parse(unsafe.Slice(unsafe.StringData(s), len(s)), 0)
				if err != nil {
					panic("jsonv: packed text is not JSON: " + err.Error())
				}
				return v
			}
		}
		if n := sharedString(body); n != nil {
			return n
		}
		return newScalar(String, body, len(s))
	}
	if n := smallInt(s); n != nil {
		return n
	}
	return newScalar(Number, s, len(s))
}

// packedChild returns child i of the packed n, with its name for an
// object.
func (n *Node) packedChild(i int) (string, *Node) {
	sp := n.spanAt(i)
	return n.childOf(sp)
}

// childOf returns the name (for an object) and value of the child of n at
// sp.
func (n *Node) childOf(sp span) (string, *Node) {
	s := n.packedText()
	name := ""
	if sp.val > sp.key {
		name = decodeLiteral(s[sp.key : sp.val-1])
	}
	return name, decodeValue(s[sp.val:sp.end])
}

// packedElems yields the elements of the packed array n, or nothing when
// n is not a packed array.
func (n *Node) packedElems() iter.Seq2[int, *Node] {
	return func(yield func(int, *Node) bool) {
		if n.Kind() != Array || !n.isPacked() {
			return
		}
		s, i := n.packedText(), 0
		for sp := range n.spans() {
			if !yield(i, decodeValue(s[sp.val:sp.end])) {
				return
			}
			i++
		}
	}
}

// packedMembers yields the members of the packed object n, or nothing
// when n is not a packed object.
func (n *Node) packedMembers() iter.Seq2[string, *Node] {
	return func(yield func(string, *Node) bool) {
		if n.Kind() != Object || !n.isPacked() {
			return
		}
		for sp := range n.spans() {
			if !yield(n.childOf(sp)) {
				return
			}
		}
	}
}

// Same reports whether a and b are the same value as held: the same node,
// or, since reading a packed container makes its children anew, two that
// have the same compact text and are scalars or packed. It costs at most
// the size of a packed container, and may report false for values whose
// text is the same.
func Same(a, b *Node) bool {
	if a == b {
		return true
	}
	if a.Kind() != b.Kind() || a.Size() != b.Size() {
		return false
	}
	switch {
	case a.Kind() == Number:
		return a.scalar().text == b.scalar().text
	case a.Kind() == String:
		ah, ahi := a.stringParts()
		bh, bhi := b.stringParts()
		return ah == bh && ahi == bhi
	case a.isPacked() && b.isPacked():
		return a.packedText() == b.packedText()
	}
	return a.Kind() < Number // null, false, true
}

// unpack returns the packed n as a tree whose small children are packed.
func unpack(n *Node) *Node {
	s := n.packedText()
	v, err := parse(unsafe.Slice(unsafe.StringData(s), len(s)), 0, 2)
	if err != nil {
		panic("jsonv: packed text is not JSON: " + err.Error())
	}
	return v
}

// unpacked returns n as a tree when it is packed, and n otherwise.
func unpacked(n *Node) *Node {
	if n.isPacked() {
		return unpack(n)
	}
	return n
}

// splice returns the packed n with its text from i to j replaced by what
// write appends, size bytes, leaving count children of depth depth (-1
// to measure it); or nil when the result would be larger than packMax.
func (e *Edit) splice(n *Node, i, j, size, count, depth int, write func([]byte) []byte) *Node {
	s := n.packedText()
	if len(s)-(j-i)+size > packMax {
		return nil
	}
	if count == 0 {
		if s[0] == '{' {
			return &emptyObject.Node
		}
		return &emptyArray.Node
	}
	// The new text is written in place, in the node's own allocation.
	total := len(s) - (j - i) + size
	p, room := allocPacked(total)
	buf := append(room[:0], s[:i]...)
	buf = write(buf)
	buf = append(buf, s[j:]...)
	text := unsafe.String(unsafe.SliceData(buf), len(buf))
	e.charge(len(text))
	if depth < 0 {
		_, depth = measureText(text)
	}
	if len(buf) != total || unsafe.SliceData(buf) != unsafe.SliceData(room) {
		// write wrote other than size bytes (Size and Append disagree):
		// keep what it wrote.
		if len(text) > packMax {
			return nil
		}
		return newPacked(text, count, depth)
	}
	p.setPacked(total, count, depth)
	return p
}

// spliceDepth returns the depth of a container of depth d once a value
// of depth was, at the end of a path of k steps in it, is replaced by one
// of depth now; or -1 when only measuring the new text tells.
func spliceDepth(d, k, was, now int) int {
	switch {
	case k+now >= d:
		return k + now
	case k+was < d:
		return d // the deepest part is elsewhere
	}
	return -1
}
