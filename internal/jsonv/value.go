// Package jsonv holds JSON values exactly as they arrived: numbers keep their
// literal text, object members keep their order, and strings keep every code
// point, including lone surrogates from \u escapes (RFC 8259).
//
// A *Node is immutable. Arrays and objects are persistent B+trees
// (internal/persist): an edit returns a new value that copies O(log n) of
// each container on its path and shares the rest, so older values stay
// valid views. Containers of at most 32 elements or members are one flat
// slice. Small scalars (null, true, false, small integers, "" and one-byte
// strings) are shared.
//
// Use [Parse] to read JSON text, [Append] to write it, [Equal] to compare
// values (RFC 6902 section 4.6), the With functions for one persistent edit,
// [Edit] for a batch (one RFC 6902 patch), and [Concat] for text that
// streams in pieces.
//
// # Concurrency
//
// Any number of goroutines may read a Node and make persistent edits of it.
// An [Edit] and a [Concat] belong to one goroutine at a time.
package jsonv

import (
	"iter"
	"strconv"
	"unsafe"

	"github.com/aguistate/aguistate/internal/persist"
)

// Kind is the type of a JSON value (RFC 8259 section 3).
type Kind uint8

// The JSON value kinds.
const (
	Null Kind = iota
	False
	True
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"null", "false", "true", "number", "string", "array", "object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Node is one JSON value. The zero Node is not valid; use the constructors
// and [Parse].
//
// A Node is the header of a larger value, chosen by its kind: a *scalar
// for numbers and strings (a *grown for strings made by [Concat]), an
// *array or an *object. Null, true and false are bare headers.
type Node struct {
	// meta holds the kind in its low bits, the grown flag, and above them
	// aux: a scalar's size in bytes of JSON text, or the bytes that escapes
	// add to an object's member names.
	meta uint64
}

const (
	kindMask  = 7
	grownFlag = 8 // a String that is a *grown
	auxShift  = 4
)

func header(k Kind, aux int) Node { return Node{meta: uint64(k) | uint64(aux)<<auxShift} }

func (n *Node) aux() int { return int(n.meta >> auxShift) }

// scalar is a number, whose text is its literal, or a string, whose text is
// its decoded value in WTF-8 (see [Parse]).
type scalar struct {
	Node
	text string
}

// array is an array's elements, with the summary of their text.
type array struct {
	Node
	elems elems
}

// object is an object's members in order, with the summary of their text.
// Its aux counts what escapes add to the member names' text, which the
// summary leaves out so that measuring a member costs O(1).
type object struct {
	Node
	members members
}

// The casts below are valid because each Node was made as the larger type
// its kind names, with the Node first.

func (n *Node) scalar() *scalar { return (*scalar)(unsafe.Pointer(n)) }
func (n *Node) array() *array   { return (*array)(unsafe.Pointer(n)) }
func (n *Node) object() *object { return (*object)(unsafe.Pointer(n)) }

// summary is what a container knows of its children without looking at
// them: the bytes of their text (members with their names, quotes and
// colon, but no commas), and their greatest depth with how many children
// reach it.
type summary struct {
	size        int
	depth, deep int32
}

func addSummary(a, b summary) summary {
	s := summary{size: a.size + b.size, depth: a.depth, deep: a.deep}
	switch {
	case a.deep == 0 || b.depth > a.depth:
		s.depth, s.deep = b.depth, b.deep
	case b.depth == a.depth:
		s.deep += b.deep
	}
	return s
}

func subSummary(a, b summary) (summary, bool) {
	a.size -= b.size
	if b.deep > 0 && b.depth == a.depth {
		if a.deep -= b.deep; a.deep <= 0 {
			return summary{}, false // the deepest child left: the depth must be found again
		}
	}
	return a, true
}

// elemMeasure and memberMeasure summarise an array's elements and an
// object's members for persist.
type (
	elemMeasure   struct{}
	memberMeasure struct{}
)

func (elemMeasure) Of(v *Node) summary                 { return summary{v.Size(), int32(v.Depth()), 1} }
func (elemMeasure) Add(a, b summary) summary           { return addSummary(a, b) }
func (elemMeasure) Sub(a, b summary) (summary, bool)   { return subSummary(a, b) }
func (memberMeasure) Add(a, b summary) summary         { return addSummary(a, b) }
func (memberMeasure) Sub(a, b summary) (summary, bool) { return subSummary(a, b) }

// Of counts a member as "name":value with the name unescaped; the object's
// aux adds what escapes cost.
func (memberMeasure) Of(m member) summary { return memberSummary(m.Key, m.Value) }

// memberSummary is the summary of the member name: v, as Size and Depth
// give it, reading v's header once.
func memberSummary(name string, v *Node) summary {
	if v.meta&(kindMask|packedFlag) == uint64(Object) {
		// A tree object first: the one an edit's path goes through.
		count, sum := v.object().members.Stat()
		return summary{len(name) + 5 + sum.size + max(count-1, 0) + v.aux(), sum.depth + 1, 1}
	}
	switch {
	case Kind(v.meta&kindMask) < Array:
		return summary{len(name) + 3 + v.aux(), 0, 1}
	case v.meta&packedFlag != 0:
		return summary{len(name) + 3 + v.packedSize(), int32(v.packedDepth()), 1}
	}
	count, sum := v.array().elems.Stat() // a tree array
	return summary{len(name) + 5 + sum.size + max(count-1, 0), sum.depth + 1, 1}
}

type (
	member  = persist.Entry[*Node]
	elems   = persist.Seq[*Node, summary, elemMeasure]
	members = persist.Map[*Node, summary, memberMeasure]
)

// Shared values. Integers from 0 to maxSmallInt and strings of at most one
// ASCII byte exist once.
const maxSmallInt = 1023

var (
	nullNode    = header(Null, 4)
	falseNode   = header(False, 5)
	trueNode    = header(True, 4)
	smallInts   [maxSmallInt + 1]scalar
	shortTexts  [128]scalar // one ASCII byte
	emptyText   = scalar{header(String, 2), ""}
	emptyArray  = array{Node: header(Array, 0)}
	emptyObject = object{Node: header(Object, 0)}
)

func init() {
	for i := range smallInts {
		s := strconv.Itoa(i)
		smallInts[i] = scalar{header(Number, len(s)), s}
	}
	for c := range shortTexts {
		s := string(rune(c))
		shortTexts[c] = scalar{header(String, StringSize(s)), s}
	}
}

// NewNull returns the JSON null value.
func NewNull() *Node { return &nullNode }

// NewBool returns true or false.
func NewBool(b bool) *Node {
	if b {
		return &trueNode
	}
	return &falseNode
}

// NewString returns a string value; s is its decoded text in WTF-8.
func NewString(s string) *Node {
	if n := sharedString(s); n != nil {
		return n
	}
	return newScalar(String, s, StringSize(s))
}

func sharedString(s string) *Node {
	switch {
	case s == "":
		return &emptyText.Node
	case len(s) == 1 && s[0] < 128:
		return &shortTexts[s[0]].Node
	}
	return nil
}

func newScalar(k Kind, text string, size int) *Node {
	return &(&scalar{header(k, size), text}).Node
}

// NewNumber returns a number from its literal text, which the caller has
// checked against the JSON number grammar (RFC 8259 section 6).
func NewNumber(lit string) *Node {
	if n := smallInt(lit); n != nil {
		return n
	}
	return newScalar(Number, lit, len(lit))
}

// smallInt returns the shared node of lit when it is the canonical literal
// of an integer from 0 to maxSmallInt, and nil otherwise.
func smallInt[T string | []byte](lit T) *Node {
	if len(lit) == 0 || len(lit) > 4 || (lit[0] == '0' && len(lit) > 1) {
		return nil
	}
	v := 0
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		if c < '0' || c > '9' {
			return nil
		}
		v = v*10 + int(c-'0')
	}
	if v > maxSmallInt {
		return nil
	}
	return &smallInts[v].Node
}

// NewArray returns an array of a copy of elems.
func NewArray(elems []*Node) *Node {
	if len(elems) == 0 {
		return &emptyArray.Node
	}
	return newArray(persist.SeqOf[*Node, summary, elemMeasure](elems...))
}

func newArray(s elems) *Node {
	if s.Len() == 0 {
		return &emptyArray.Node
	}
	return &(&array{header(Array, 0), s}).Node
}

// NewObject returns an object of the members names[i]: vals[i], in that
// order. The names must be distinct; NewObject panics otherwise.
func NewObject(names []string, vals []*Node) *Node {
	if len(names) == 0 {
		return &emptyObject.Node
	}
	ms := make([]member, len(names))
	extra := 0
	for i, name := range names {
		ms[i] = member{Key: name, Value: vals[i]}
		extra += nameExtra(name)
	}
	m, ok := persist.MapOf[*Node, summary, memberMeasure](ms...)
	if !ok {
		panic("jsonv: NewObject: duplicate member name")
	}
	return newObject(m, extra)
}

func newObject(m members, extra int) *Node {
	if m.Len() == 0 {
		return &emptyObject.Node
	}
	return &(&object{header(Object, extra), m}).Node
}

// nameExtra returns what escapes add to the text of a member name.
func nameExtra(name string) int { return StringSize(name) - len(name) - 2 }

// Kind returns the value's kind.
func (n *Node) Kind() Kind { return Kind(n.meta & kindMask) }

// Size returns the length in bytes of the value's compact JSON text, as
// [Append] writes it. It costs O(1).
func (n *Node) Size() int {
	if n.isPacked() {
		return n.packedSize()
	}
	switch n.Kind() {
	case Array:
		count, sum := n.array().elems.Stat()
		return 2 + sum.size + max(count-1, 0)
	case Object:
		count, sum := n.object().members.Stat()
		return 2 + sum.size + max(count-1, 0) + n.aux()
	}
	return n.aux()
}

// Depth returns the value's nesting depth: 0 for a scalar, 1 for a
// container of scalars, and so on. It costs O(1).
func (n *Node) Depth() int {
	if n.isPacked() {
		return n.packedDepth()
	}
	switch n.Kind() {
	case Array:
		_, sum := n.array().elems.Stat()
		return 1 + int(sum.depth)
	case Object:
		_, sum := n.object().members.Stat()
		return 1 + int(sum.depth)
	}
	return 0
}

// Text returns a string's decoded text (WTF-8) or a number's literal text,
// and "" for other kinds.
func (n *Node) Text() string {
	switch n.Kind() {
	case Number:
		return n.scalar().text
	case String:
		head, hi := n.stringParts()
		if hi == 0 {
			return head
		}
		return string(appendWTF8([]byte(head), hi))
	}
	return ""
}

// TextHead returns a string's text (WTF-8) but for a lone high surrogate
// that a string made by Concat ends in, which Concat holds apart until the
// next piece shows whether it pairs, and whether it holds one; "" for
// other kinds. It costs O(1), where Text copies such a string.
func (n *Node) TextHead() (head string, held bool) {
	if n.Kind() != String {
		return "", false
	}
	head, hi := n.stringParts()
	return head, hi != 0
}

// stringParts returns a string's text as a head and, for a string made by
// Concat that ends in a lone high surrogate, that surrogate (else 0).
func (n *Node) stringParts() (head string, hi rune) {
	if n.meta&grownFlag != 0 {
		g := (*grown)(unsafe.Pointer(n))
		return g.text, g.hi
	}
	return n.scalar().text, 0
}

// Len returns the number of elements of an array or members of an object,
// and 0 for other kinds.
func (n *Node) Len() int {
	if n.isPacked() {
		return n.packedCount()
	}
	switch n.Kind() {
	case Array:
		return n.array().elems.Len()
	case Object:
		return n.object().members.Len()
	}
	return 0
}

// Elem returns element i of an array, in O(log n); i must be in range.
func (n *Node) Elem(i int) *Node {
	if n.isPacked() {
		_, v := n.packedChild(i)
		return v
	}
	return n.array().elems.At(i)
}

// All returns an iterator over an array's elements and their indexes, or
// over nothing for other kinds.
func (n *Node) All() iter.Seq2[int, *Node] {
	if n.meta&(kindMask|packedFlag) != uint64(Array) {
		return n.packedElems() // or nothing, for other kinds
	}
	return n.array().elems.All()
}

// Member returns member i of an object as its name and value, in O(log n).
func (n *Node) Member(i int) (string, *Node) {
	if n.isPacked() {
		return n.packedChild(i)
	}
	return n.object().members.At(i)
}

// Members returns an iterator over an object's member names and values in
// order, or over nothing for other kinds.
func (n *Node) Members() iter.Seq2[string, *Node] {
	if n.meta&(kindMask|packedFlag) != uint64(Object) {
		return n.packedMembers() // or nothing, for other kinds
	}
	return n.object().members.All()
}

// Get returns the value of the member called name, or nil, in O(log n).
func (n *Node) Get(name string) *Node {
	if n.Kind() != Object {
		return nil
	}
	_, v := n.find(name)
	return v
}

// StringMember returns the text of the member called name, as
// Get(name).Text() does, when n is an object whose member it is a string;
// and false when it is absent or not a string, or n is not an object.
// Unlike Get, it makes no node for a member of a packed object.
func (n *Node) StringMember(name string) (string, bool) {
	if n.Kind() != Object {
		return "", false
	}
	if !n.isPacked() {
		_, v := n.object().members.Find(name)
		if v == nil || v.Kind() != String {
			return "", false
		}
		return v.Text(), true
	}
	i, sp := n.findSpan(name)
	if s := n.packedText(); i >= 0 && s[sp.val] == '"' {
		return decodeLiteral(s[sp.val:sp.end]), true
	}
	return "", false
}

// find returns the position and value of an object's member called name,
// or -1.
func (n *Node) find(name string) (int, *Node) {
	if n.isPacked() {
		i, sp := n.findSpan(name)
		if i < 0 {
			return -1, nil
		}
		return i, decodeValue(n.packedText()[sp.val:sp.end])
	}
	return n.object().members.Find(name)
}
