// Package jsonv holds JSON values exactly as they arrived: numbers keep their
// literal text, object members keep their order, and strings keep every code
// point, including lone surrogates from \u escapes (RFC 8259).
//
// A *Node is immutable once it has been published. Code that builds a new
// value (the patch engine) may edit a node in place only while the node's
// generation equals the generation it was given by [NewGen]; every node made by
// [Parse] has generation 0 and is therefore frozen from the start.
package jsonv

import (
	"iter"
	"sync/atomic"
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

// indexMin is the member count above which an object keeps a name index.
const indexMin = 8

// Node is one JSON value. The zero Node is not valid; use the constructors.
// Every node knows the length of its compact JSON text and its nesting
// depth, kept up to date by the editing methods, so that limits on both
// cost nothing to check.
type Node struct {
	kind  Kind
	depth int32   // 0 for scalars, 1 + the deepest child for containers
	deep  int32   // containers: how many children are depth-1 deep
	gen   uint64  // generation allowed to edit in place; 0 means frozen
	size  int     // bytes of compact JSON text
	str   string  // Number: literal text; String: decoded text (WTF-8)
	elems []*Node // Array elements
	obj   *members
}

// members holds an object's members in arrival order.
type members struct {
	names []string
	vals  []*Node
	index map[string]int // nil while len(names) <= indexMin
	// ownNames and ownIndex report that names and index belong to this
	// object alone and may be edited in place; a clone shares its source's
	// until it must change them.
	ownNames, ownIndex bool
}

var (
	nullNode  = &Node{kind: Null, size: 4}
	falseNode = &Node{kind: False, size: 5}
	trueNode  = &Node{kind: True, size: 4}
	genSeq    atomic.Uint64
)

// NewGen returns a generation number that no node has yet.
func NewGen() uint64 { return genSeq.Add(1) }

// NewNull returns the JSON null value.
func NewNull() *Node { return nullNode }

// NewBool returns true or false.
func NewBool(b bool) *Node {
	if b {
		return trueNode
	}
	return falseNode
}

// NewString returns a string value.
func NewString(s string) *Node { return &Node{kind: String, str: s, size: StringSize(s)} }

// NewNumber returns a number from its literal text, which the caller has
// checked against the JSON number grammar.
func NewNumber(lit string) *Node { return &Node{kind: Number, str: lit, size: len(lit)} }

// NewArray returns an array holding elems (not copied).
func NewArray(elems []*Node) *Node {
	n := &Node{kind: Array, elems: elems}
	n.measure()
	return n
}

// NewObject returns an object holding the members names[i]: vals[i] (not
// copied). The names must be distinct.
func NewObject(names []string, vals []*Node) *Node {
	m := &members{names: names, vals: vals, ownNames: true}
	m.buildIndex()
	n := &Node{kind: Object, obj: m}
	n.measure()
	return n
}

// measure sets a container's size and depth from its children.
func (n *Node) measure() {
	n.size = 2
	if n.kind == Array {
		for _, e := range n.elems {
			n.size += e.size
		}
		n.size += max(len(n.elems)-1, 0)
	} else {
		for i, name := range n.obj.names {
			n.size += StringSize(name) + 1 + n.obj.vals[i].size
		}
		n.size += max(len(n.obj.names)-1, 0)
	}
	n.remeasureDepth()
}

// remeasureDepth recomputes a container's depth, and how many children
// reach it, from all its children.
func (n *Node) remeasureDepth() {
	kids := n.elems
	if n.kind == Object {
		kids = n.obj.vals
	}
	n.depth, n.deep = 1, 0
	for _, k := range kids {
		n.addDepth(k.depth)
	}
}

// addDepth counts a new child of depth d.
func (n *Node) addDepth(d int32) {
	switch {
	case d+1 > n.depth:
		n.depth, n.deep = d+1, 1
	case d+1 == n.depth:
		n.deep++
	}
}

// dropDepth uncounts a removed child of depth d. Only when the last of the
// deepest children goes does the container look at all the others, so
// removing many children costs each of them once.
func (n *Node) dropDepth(d int32) (work int) {
	if d+1 != n.depth {
		return 0
	}
	if n.deep--; n.deep > 0 {
		return 0
	}
	n.remeasureDepth()
	return n.Len()
}

// Size returns the length in bytes of the value's compact JSON text, as
// [Append] writes it.
func (n *Node) Size() int { return n.size }

// Depth returns the value's nesting depth: 0 for a scalar, 1 for a
// container of scalars, and so on.
func (n *Node) Depth() int { return int(n.depth) }

// childChanged updates an owned container's size and depth after one of its
// children, which had size oldSize and depth oldDepth, became v.
func (n *Node) childChanged(oldSize int, oldDepth int32, v *Node) (work int) {
	n.size += v.size - oldSize
	if v.depth == oldDepth {
		return 1
	}
	n.addDepth(v.depth) // first, so that the count never falls to zero needlessly
	return 1 + n.dropDepth(oldDepth)
}

// ChildChanged tells an owned container that its child at position i (an
// element index or member position) was edited in place from size oldSize
// and depth oldDepth, so that it can update its own size and depth.
func (n *Node) ChildChanged(i, oldSize, oldDepth int) (work int) {
	return n.childChanged(oldSize, int32(oldDepth), n.child(i))
}

func (n *Node) child(i int) *Node {
	if n.kind == Array {
		return n.elems[i]
	}
	return n.obj.vals[i]
}

func (m *members) buildIndex() {
	if len(m.names) <= indexMin {
		m.index, m.ownIndex = nil, false
		return
	}
	m.index = make(map[string]int, len(m.names))
	for i, name := range m.names {
		m.index[name] = i
	}
	m.ownIndex = true
}

// Kind returns the value's kind.
func (n *Node) Kind() Kind { return n.kind }

// Text returns a string's decoded text or a number's literal text.
func (n *Node) Text() string { return n.str }

// Len returns the number of elements of an array or members of an object,
// and 0 for other kinds.
func (n *Node) Len() int {
	switch n.kind {
	case Array:
		return len(n.elems)
	case Object:
		return len(n.obj.names)
	}
	return 0
}

// Elem returns element i of an array; i must be in range.
func (n *Node) Elem(i int) *Node { return n.elems[i] }

// Elems returns an array's elements. The caller must not modify them.
// Prefer [Node.All]: it does not depend on how elements are stored.
func (n *Node) Elems() []*Node { return n.elems }

// All returns an iterator over an array's elements and their indexes.
func (n *Node) All() iter.Seq2[int, *Node] {
	return func(yield func(int, *Node) bool) {
		for i, e := range n.elems {
			if !yield(i, e) {
				return
			}
		}
	}
}

// Member returns member i of an object as its name and value.
func (n *Node) Member(i int) (string, *Node) { return n.obj.names[i], n.obj.vals[i] }

// Lookup returns the position of the member called name, or -1.
func (n *Node) Lookup(name string) int {
	m := n.obj
	if m.index != nil {
		if i, ok := m.index[name]; ok {
			return i
		}
		return -1
	}
	for i, s := range m.names {
		if s == name {
			return i
		}
	}
	return -1
}

// Get returns the value of the member called name, or nil.
func (n *Node) Get(name string) *Node {
	if n.kind != Object {
		return nil
	}
	if i := n.Lookup(name); i >= 0 {
		return n.obj.vals[i]
	}
	return nil
}

// Owned returns n itself when generation gen may edit it in place, and
// otherwise a shallow copy of n that gen owns. Scalars are returned as they
// are: they are never edited.
func (n *Node) Owned(gen uint64) *Node {
	if n.gen == gen || (n.kind != Array && n.kind != Object) {
		return n
	}
	c := &Node{kind: n.kind, gen: gen, size: n.size, depth: n.depth, deep: n.deep}
	if n.kind == Array {
		c.elems = append(make([]*Node, 0, len(n.elems)+1), n.elems...)
		return c
	}
	m := n.obj
	c.obj = &members{
		names: m.names[:len(m.names):len(m.names)],
		vals:  append(make([]*Node, 0, len(m.vals)+1), m.vals...),
		index: m.index,
	}
	return c
}

// SetElem replaces element i of an owned array.
func (n *Node) SetElem(i int, v *Node) (work int) {
	old := n.elems[i]
	n.elems[i] = v
	return n.childChanged(old.size, old.depth, v)
}

// The structural edits below return their work: how many elements, members
// or index entries they moved or copied, so that a caller can bound the
// cost of many edits.

// InsertElem inserts v before element i (0 <= i <= Len) of an owned array.
func (n *Node) InsertElem(i int, v *Node) (work int) {
	n.elems = append(n.elems, nil)
	copy(n.elems[i+1:], n.elems[i:])
	n.elems[i] = v
	n.size += v.size
	if len(n.elems) > 1 {
		n.size++ // comma
	}
	n.addDepth(v.depth)
	return len(n.elems) - i
}

// RemoveElem removes element i of an owned array.
func (n *Node) RemoveElem(i int) (work int) {
	old := n.elems[i]
	copy(n.elems[i:], n.elems[i+1:])
	n.elems[len(n.elems)-1] = nil
	n.elems = n.elems[:len(n.elems)-1]
	n.size -= old.size
	if len(n.elems) > 0 {
		n.size-- // comma
	}
	return len(n.elems) - i + 1 + n.dropDepth(old.depth)
}

// SetMember replaces the value of member i of an owned object.
func (n *Node) SetMember(i int, v *Node) (work int) {
	old := n.obj.vals[i]
	n.obj.vals[i] = v
	return n.childChanged(old.size, old.depth, v)
}

// AddMember appends a member called name, which must not exist yet, to an
// owned object.
func (n *Node) AddMember(name string, v *Node) (work int) {
	m := n.obj
	if !m.ownNames {
		work += len(m.names) // append copies a shared slice, whose capacity is its length
		m.ownNames = true
	}
	m.names = append(m.names, name)
	m.vals = append(m.vals, v)
	n.size += StringSize(name) + 1 + v.size
	if len(m.names) > 1 {
		n.size++ // comma
	}
	n.addDepth(v.depth)
	switch {
	case m.index == nil && len(m.names) > indexMin:
		m.buildIndex()
		work += indexWeight * len(m.names)
	case m.index != nil:
		work += m.editIndex()
		m.index[name] = len(m.names) - 1
	}
	return work + 1
}

// indexWeight is what copying one name index entry costs, in copied
// pointers: a map insert hashes, and may allocate.
const indexWeight = 16

// editIndex makes the index this object's own, and returns the work.
func (m *members) editIndex() int {
	if m.ownIndex {
		return 0
	}
	m.index = cloneIndex(m.index, len(m.names)+1)
	m.ownIndex = true
	return indexWeight * len(m.names)
}

// RemoveMember removes member i of an owned object; the members after it keep
// their order.
func (n *Node) RemoveMember(i int) (work int) {
	m := n.obj
	name, old := m.names[i], m.vals[i]
	if !m.ownNames {
		m.names = append(make([]string, 0, len(m.names)), m.names...)
		m.ownNames = true
		work += len(m.names)
	}
	copy(m.names[i:], m.names[i+1:])
	m.names = m.names[:len(m.names)-1]
	copy(m.vals[i:], m.vals[i+1:])
	m.vals[len(m.vals)-1] = nil
	m.vals = m.vals[:len(m.vals)-1]
	work += 2 * (len(m.names) - i + 1)
	switch {
	case m.index == nil:
	case len(m.names) <= indexMin:
		m.index, m.ownIndex = nil, false
	default:
		work += m.editIndex()
		delete(m.index, name)
		for j := i; j < len(m.names); j++ {
			m.index[m.names[j]] = j
		}
		work += indexWeight * (len(m.names) - i)
	}
	n.size -= StringSize(name) + 1 + old.size
	if len(m.names) > 0 {
		n.size-- // comma
	}
	return work + n.dropDepth(old.depth)
}

func cloneIndex(src map[string]int, size int) map[string]int {
	dst := make(map[string]int, size)
	for k, v := range src {
		dst[k] = v
	}
	return dst
}
