// The B+tree nodes shared by Seq and Map: leaves of items, branches of children with their
// summaries.

package persist

import (
	"slices"
	"unsafe"
)

// Node sizes. A leaf holds at most leafMax elements, and a branch at most
// branchMax children; every node but the root holds at least the minimum,
// so that a tree of n elements is at most 1 + log_4(n/16) branches deep.
const (
	leafMax   = FlatMax
	leafMin   = 8
	branchMax = 16
	branchMin = 4
)

// FlatMax is the most elements that a container keeps in one flat leaf, a
// single slice; a larger one is a tree.
const FlatMax = 32

// fill is how many elements SeqOf and Builder put in each leaf of a tree:
// nearly full, since most containers are read far more than edited, and
// one short of full so that the first insert does not split a leaf.
const fill = leafMax * 7 / 8

// node is one subtree: a leaf or a branch. It is held by value in its
// parent's kids (and in a Seq), so that a parent finds its children's
// summaries without following pointers, and it is small, so that copying a
// branch (every edit of a tree copies one per level) is cheap.
type node[T, S any, M Measure[T, S]] struct {
	lf  *leaf[T]         // a leaf's elements; nil in a branch and in an empty Seq
	br  *branch[T, S, M] // a branch's children; nil in a leaf
	sum S                // the summary of every element below
}

// leaf is the inside of a leaf node.
type leaf[T any] struct {
	items []T
	own   uint64 // the token allowed to change the leaf in place
	id    uint64 // identity, kept by copies; 0 until the leaf is in a tree
}

// branch is the inside of a branch node.
type branch[T, S any, M Measure[T, S]] struct {
	kids []node[T, S, M]
	n    int    // elements below
	own  uint64 // the token allowed to change kids in place
	id   uint64 // identity, kept by copies
}

// items returns a leaf's elements, which the caller must not change.
func (c *node[T, S, M]) items() []T {
	if c.lf == nil {
		return nil
	}
	return c.lf.items
}

func (c *node[T, S, M]) len() int {
	if c.br != nil {
		return c.br.n
	}
	return len(c.items())
}

func (c *node[T, S, M]) ident() uint64 {
	switch {
	case c.br != nil:
		return c.br.id
	case c.lf != nil:
		return c.lf.id
	}
	return 0
}

// splits returns 1 when an insert below c may split it, since it is full,
// and 0 otherwise: the room that a copy of its parent needs for an insert.
func (c *node[T, S, M]) splits() int {
	if c.br != nil && len(c.br.kids) == branchMax || c.br == nil && len(c.items()) == leafMax {
		return 1
	}
	return 0
}

// small reports whether a node that is not the root has too few children.
func (c *node[T, S, M]) small() bool {
	if c.br != nil {
		return len(c.br.kids) < branchMin
	}
	return len(c.items()) < leafMin
}

// locate returns the child holding position i of the branch, and i's
// position in it. Position n (one past the end) is in the last child.
func (b *branch[T, S, M]) locate(i int) (k, off int) {
	for k := range b.kids {
		n := b.kids[k].len()
		if i < n {
			return k, i
		}
		i -= n
	}
	k = len(b.kids) - 1
	return k, b.kids[k].len()
}

// walk yields the elements of c in order, numbering them from *i.
func (c *node[T, S, M]) walk(i *int, yield func(int, T) bool) bool {
	if c.br == nil {
		for _, v := range c.items() {
			if !yield(*i, v) {
				return false
			}
			*i++
		}
		return true
	}
	for k := range c.br.kids {
		if !c.br.kids[k].walk(i, yield) {
			return false
		}
	}
	return true
}

// chunks yields the items of each leaf below c in order.
func (c *node[T, S, M]) chunks(yield func([]T) bool) bool {
	if c.br == nil {
		return c.len() == 0 || yield(c.items())
	}
	for k := range c.br.kids {
		if !c.br.kids[k].chunks(yield) {
			return false
		}
	}
	return true
}

// tracker hears where elements and nodes move, so that a Map can keep its
// index of which leaf holds each key, and of each node's parent.
type tracker[T any] interface {
	placed(v T, leaf uint64)       // v was stored in leaf
	removed(v T, leaf uint64)      // v was taken out of leaf
	moved(vs []T, from, to uint64) // vs went from one leaf to another
	adopted(kid, parent uint64)    // kid is a child of parent; 0 means the root
	dropped(id uint64)             // the node id is gone
}

// editor performs one edit, or one batch of edits with the same token.
type editor[T, S any, M Measure[T, S]] struct {
	tok uint64
	o   *Owner // counts the bytes allocated; nil for none
	tr  tracker[T]
	m   M
}

// alloc counts n new elements of type E, for the Owner.
func alloc[E any, T, S any, M Measure[T, S]](e *editor[T, S, M], n int) {
	if e.o != nil {
		var v E
		e.o.copied += n * int(unsafe.Sizeof(v))
	}
}

func (e *editor[T, S, M]) leafSum(items []T) S {
	var s S
	for _, v := range items {
		s = e.m.Add(s, e.m.Of(v))
	}
	return s
}

func (e *editor[T, S, M]) kidsSum(kids []node[T, S, M]) S {
	var s S
	for k := range kids {
		s = e.m.Add(s, kids[k].sum)
	}
	return s
}

func (e *editor[T, S, M]) resum(c *node[T, S, M]) {
	if c.br == nil {
		c.sum = e.leafSum(c.items())
	} else {
		c.sum = e.kidsSum(c.br.kids)
	}
}

// sub takes out of c's summary a part out that c no longer holds.
func (e *editor[T, S, M]) sub(c *node[T, S, M], out S) {
	if s, ok := e.m.Sub(c.sum, out); ok {
		c.sum = s
	} else {
		e.resum(c)
	}
}

// replace updates c's summary after an element of summary out became one of
// summary in. Adding first keeps a count of maximal elements from falling to
// zero when in reaches the same maximum.
func (e *editor[T, S, M]) replace(c *node[T, S, M], out, in S) {
	if s, ok := e.m.Sub(e.m.Add(c.sum, in), out); ok {
		c.sum = s
	} else {
		e.resum(c)
	}
}

// ownItems makes leaf c's items an array the editor may change, with room
// for extra more elements. An array the editor owns already grows by a
// quarter, up to leafMax, so that a batch leaves at most a quarter of it
// unused; a shared one is copied at its exact size.
func (e *editor[T, S, M]) ownItems(c *node[T, S, M], extra int) {
	old := c.items()
	n := len(old)
	size := n + extra
	owned := c.lf != nil && c.lf.own == e.tok
	if owned {
		if cap(old) >= size {
			return
		}
		size = max(size, min(n+max(n/4, 4), leafMax))
	}
	if owned {
		items := make([]T, n, size)
		copy(items, old)
		alloc[T](e, size)
		c.lf.items = items
		return
	}
	var id uint64
	if c.lf != nil {
		id = c.lf.id
	}
	c.lf = newLeaf[T](old, size)
	c.lf.own, c.lf.id = e.tok, id
	alloc[T](e, cap(c.lf.items))
	alloc[leaf[T]](e, 1)
}

// newLeaf returns a leaf of a copy of items, with room for size elements.
// A small leaf and its elements are one allocation: most containers are
// small, and a copy of one then costs one allocation, not two.
func newLeaf[T any](items []T, size int) *leaf[T] {
	_, l := newLeafIn[T, struct{}](items, size)
	return l
}

// newLeafIn is newLeaf, allocating a zero P in front of the leaf, in the
// same allocation, and returning it too.
func newLeafIn[T, P any](items []T, size int) (*P, *leaf[T]) {
	switch {
	case size <= 1:
		return leafWith[T, P](items, func(r *[1]T) []T { return r[:] })
	case size <= 2:
		return leafWith[T, P](items, func(r *[2]T) []T { return r[:] })
	case size <= 3:
		return leafWith[T, P](items, func(r *[3]T) []T { return r[:] })
	case size <= 4:
		return leafWith[T, P](items, func(r *[4]T) []T { return r[:] })
	case size <= 6:
		return leafWith[T, P](items, func(r *[6]T) []T { return r[:] })
	case size <= 8:
		return leafWith[T, P](items, func(r *[8]T) []T { return r[:] })
	}
	b := new(struct {
		pre P
		leaf[T]
	})
	b.items = append(make([]T, 0, size), items...)
	return &b.pre, &b.leaf
}

// leafWith returns a zero P and a leaf of a copy of items allocated with
// the array R of its elements, which room slices. Items that fill R are
// copied as one array value, and fewer one by one: for the few that a small
// leaf holds, either costs less than a call to copy them in bulk.
func leafWith[T, P, R any](items []T, room func(*R) []T) (*P, *leaf[T]) {
	b := new(struct {
		pre P
		leaf[T]
		room R
	})
	r := room(&b.room)[:len(items)]
	if len(items) == cap(r) {
		b.room = *(*R)(unsafe.Pointer(unsafe.SliceData(items))) // items are exactly an R
	} else {
		//lint:ignore S1001 copy calls typedslicecopy and memmove, which cost more here than the loop
		for j, v := range items {
			r[j] = v
		}
	}
	b.items = r
	return &b.pre, &b.leaf
}

// copyFlatIn makes the flat root c, which the editor does not own, a copy
// it owns, allocated with a zero P that it returns.
func copyFlatIn[P, T, S any, M Measure[T, S]](e *editor[T, S, M], c *node[T, S, M]) *P {
	old := c.items()
	var id uint64
	if c.lf != nil {
		id = c.lf.id
	}
	p, l := newLeafIn[T, P](old, len(old))
	l.own, l.id = e.tok, id
	c.lf = l
	alloc[T](e, cap(l.items))
	alloc[leaf[T]](e, 1)
	return p
}

// newBranch returns a branch of a copy of kids, with room for size
// children. The branch and its children are one allocation, as a small
// leaf and its elements are, so that copying a branch on a path costs one.
func newBranch[T, S any, M Measure[T, S]](kids []node[T, S, M], size int) *branch[T, S, M] {
	var b *branch[T, S, M]
	switch {
	case size <= 4:
		b = branchWith(func(r *[4]node[T, S, M]) []node[T, S, M] { return r[:] })
	case size <= 8:
		b = branchWith(func(r *[8]node[T, S, M]) []node[T, S, M] { return r[:] })
	case size <= 12:
		b = branchWith(func(r *[12]node[T, S, M]) []node[T, S, M] { return r[:] })
	case size <= branchMax:
		b = branchWith(func(r *[branchMax]node[T, S, M]) []node[T, S, M] { return r[:] })
	case size <= branchMax+1:
		b = branchWith(func(r *[branchMax + 1]node[T, S, M]) []node[T, S, M] { return r[:] })
	default:
		b = &branch[T, S, M]{kids: make([]node[T, S, M], 0, size)}
	}
	b.kids = append(b.kids, kids...)
	return b
}

// branchWith returns an empty branch allocated with the array R of its
// children, which room slices.
func branchWith[T, S any, M Measure[T, S], R any](room func(*R) []node[T, S, M]) *branch[T, S, M] {
	b := new(struct {
		branch[T, S, M]
		room R
	})
	b.kids = room(&b.room)[:0]
	return &b.branch
}

// ownBranch makes c's branch one the editor may change, and returns it. A
// copy has room for extra more children: one where an insert may split the
// child it goes down to, none for a remove or a replace, so that a path
// copied for an edit holds no more than it needs.
func (e *editor[T, S, M]) ownBranch(c *node[T, S, M], extra int) *branch[T, S, M] {
	b := c.br
	if b.own == e.tok {
		return b
	}
	nb := newBranch(b.kids, len(b.kids)+extra)
	nb.n, nb.own, nb.id = b.n, e.tok, b.id
	c.br = nb
	alloc[node[T, S, M]](e, cap(nb.kids))
	alloc[branch[T, S, M]](e, 1)
	return nb
}

// insert puts v, of summary vs, at position i of c, which the editor may
// change in its parent. When c is full it splits and insert returns the new
// right sibling. When v goes after every element of the container (atEnd),
// a split leaves the left node fuller, so that appending fills nodes.
func (e *editor[T, S, M]) insert(c *node[T, S, M], i int, v T, vs S, atEnd bool) (right node[T, S, M], split bool) {
	if c.br == nil {
		target := c
		if c.len() == leafMax {
			keep := leafMax / 2
			if atEnd {
				keep = leafMax - leafMin
			}
			right, split = e.splitLeaf(c, keep), true
			if i > keep {
				target, i = &right, i-keep
			}
		}
		e.ownItems(target, 1)
		target.lf.items = slices.Insert(target.lf.items, i, v)
		target.sum = e.m.Add(target.sum, vs)
		if e.tr != nil {
			e.tr.placed(v, target.lf.id)
		}
		return right, split
	}
	k, off := c.br.locate(i)
	b := e.ownBranch(c, c.br.kids[k].splits())
	r, ok := e.insert(&b.kids[k], off, v, vs, atEnd)
	b.n++
	c.sum = e.m.Add(c.sum, vs)
	if !ok {
		return right, false
	}
	b.kids = slices.Insert(b.kids, k+1, r)
	if e.tr != nil {
		e.tr.adopted(r.ident(), b.id)
	}
	if len(b.kids) <= branchMax {
		return right, false
	}
	keep := len(b.kids) / 2
	if atEnd {
		keep = len(b.kids) - branchMin
	}
	return e.splitBranch(c, keep), true
}

// splitLeaf moves the elements of leaf c after the first keep to a new
// leaf, and returns it. The left part of a split made by appending is
// copied at its exact size, since it will seldom grow again.
func (e *editor[T, S, M]) splitLeaf(c *node[T, S, M], keep int) node[T, S, M] {
	old := c.items()
	rl := &leaf[T]{items: make([]T, len(old)-keep, len(old)-keep+1), own: e.tok, id: newID()}
	copy(rl.items, old[keep:])
	alloc[T](e, len(rl.items)+1)
	alloc[leaf[T]](e, 1)
	if c.lf.own == e.tok && keep < leafMax-leafMin {
		clear(old[keep:])
		c.lf.items = old[:keep]
	} else {
		items := make([]T, keep, keep+1)
		copy(items, old)
		c.lf = &leaf[T]{items: items, own: e.tok, id: c.lf.id}
		alloc[T](e, keep+1)
		alloc[leaf[T]](e, 1)
	}
	if c.lf.id == 0 {
		c.lf.id = newID()
	}
	right := node[T, S, M]{lf: rl, sum: e.leafSum(rl.items)}
	e.sub(c, right.sum)
	if e.tr != nil {
		e.tr.moved(rl.items, c.lf.id, rl.id)
	}
	return right
}

// splitBranch moves the children of c's branch, which the editor owns,
// after the first keep to a new branch, and returns it.
func (e *editor[T, S, M]) splitBranch(c *node[T, S, M], keep int) node[T, S, M] {
	b := c.br
	nb := newBranch(b.kids[keep:], len(b.kids)-keep+1)
	nb.own, nb.id = e.tok, newID()
	alloc[node[T, S, M]](e, len(nb.kids)+1)
	alloc[branch[T, S, M]](e, 1)
	clear(b.kids[keep:])
	b.kids = b.kids[:keep]
	for k := range nb.kids {
		nb.n += nb.kids[k].len()
		if e.tr != nil {
			e.tr.adopted(nb.kids[k].ident(), nb.id)
		}
	}
	b.n -= nb.n
	right := node[T, S, M]{br: nb, sum: e.kidsSum(nb.kids)}
	e.sub(c, right.sum)
	return right
}

// grow puts a new branch above root and its new sibling right.
func (e *editor[T, S, M]) grow(root, right node[T, S, M]) node[T, S, M] {
	b := newBranch([]node[T, S, M]{root, right}, 3)
	b.n, b.own, b.id = root.len()+right.len(), e.tok, newID()
	alloc[node[T, S, M]](e, 2)
	alloc[branch[T, S, M]](e, 1)
	if e.tr != nil {
		e.tr.adopted(root.ident(), b.id)
		e.tr.adopted(right.ident(), b.id)
	}
	return node[T, S, M]{br: b, sum: e.m.Add(root.sum, right.sum)}
}

// shrink replaces a root branch that has one child left by that child.
func (e *editor[T, S, M]) shrink(root node[T, S, M]) node[T, S, M] {
	for root.br != nil && len(root.br.kids) == 1 {
		if e.tr != nil {
			e.tr.dropped(root.br.id)
			e.tr.adopted(root.br.kids[0].ident(), 0)
		}
		root = root.br.kids[0]
	}
	return root
}

// remove takes out the element at position i of c, which the editor may
// change in its parent, and returns it with its summary. A child left too
// small is merged with a sibling or takes some of its elements.
func (e *editor[T, S, M]) remove(c *node[T, S, M], i int) (old T, os S) {
	if c.br == nil {
		e.ownItems(c, 0)
		old = c.lf.items[i]
		os = e.m.Of(old)
		c.lf.items = slices.Delete(c.lf.items, i, i+1)
		e.sub(c, os)
		if e.tr != nil {
			e.tr.removed(old, c.lf.id)
		}
		return old, os
	}
	b := e.ownBranch(c, 0)
	k, off := b.locate(i)
	old, os = e.remove(&b.kids[k], off)
	b.n--
	if b.kids[k].small() {
		e.rebalance(b, k)
	}
	e.sub(c, os)
	return old, os
}

// update replaces the element at position i of c by f of it, and returns the
// summaries of the old and the new element. The old one is measured before
// f runs, so f may change it in place.
func (e *editor[T, S, M]) update(c *node[T, S, M], i int, f func(T) T) (os, ns S) {
	if c.br == nil {
		e.ownItems(c, 0)
		items := c.lf.items
		os = e.m.Of(items[i])
		items[i] = f(items[i])
		ns = e.m.Of(items[i])
	} else {
		b := e.ownBranch(c, 0)
		k, off := b.locate(i)
		os, ns = e.update(&b.kids[k], off, f)
	}
	e.replace(c, os, ns)
	return os, ns
}

// set puts v at position i of c, as update does with a function that
// returns v, given the summaries of the old element and of v.
func (e *editor[T, S, M]) set(c *node[T, S, M], i int, v T, os, ns S) {
	if c.br == nil {
		e.ownItems(c, 0)
		c.lf.items[i] = v
	} else {
		b := e.ownBranch(c, 0)
		k, off := b.locate(i)
		e.set(&b.kids[k], off, v, os, ns)
	}
	e.replace(c, os, ns) // after the children's, which resum may read
}

// rebalance mends child k of b, which has too few children or elements, by
// merging it with a neighbour or sharing the neighbour's evenly. Either way
// it costs O(leafMax) or O(branchMax), and leaves both nodes far enough from
// the bounds that many more edits must come before the next rebalance.
func (e *editor[T, S, M]) rebalance(b *branch[T, S, M], k int) {
	l := min(k, len(b.kids)-2)
	L, R := &b.kids[l], &b.kids[l+1]
	if L.br == nil {
		nl, nr := L.len(), R.len()
		if nl+nr <= leafMax {
			e.ownItems(L, nr)
			if e.tr != nil {
				e.tr.moved(R.items(), R.lf.id, L.lf.id)
				e.tr.dropped(R.lf.id)
			}
			L.lf.items = append(L.lf.items, R.items()...)
			L.sum = e.m.Add(L.sum, R.sum)
			b.kids = slices.Delete(b.kids, l+1, l+2)
			return
		}
		half := (nl + nr) / 2
		if nl > nr {
			e.ownItems(L, 0)
			e.ownItems(R, nl-half)
			moved := L.lf.items[half:]
			if e.tr != nil {
				e.tr.moved(moved, L.lf.id, R.lf.id)
			}
			R.lf.items = slices.Insert(R.lf.items, 0, moved...)
			clear(moved)
			L.lf.items = L.lf.items[:half]
		} else {
			e.ownItems(L, half-nl)
			e.ownItems(R, 0)
			moved := R.lf.items[:nr-half]
			if e.tr != nil {
				e.tr.moved(moved, R.lf.id, L.lf.id)
			}
			L.lf.items = append(L.lf.items, moved...)
			R.lf.items = slices.Delete(R.lf.items, 0, nr-half)
		}
		e.resum(L)
		e.resum(R)
		return
	}
	// Each copy gets room for the children it takes from the other.
	nl, nr := len(L.br.kids), len(R.br.kids)
	half := (nl + nr) / 2
	var lx, rx int
	switch {
	case nl+nr <= branchMax:
		lx = nr
	case nl > nr:
		rx = nl - half
	default:
		lx = nr - half
	}
	lb, rb := e.ownBranch(L, lx), e.ownBranch(R, rx)
	if nl+nr <= branchMax {
		if e.tr != nil {
			for j := range rb.kids {
				e.tr.adopted(rb.kids[j].ident(), lb.id)
			}
			e.tr.dropped(rb.id)
		}
		lb.kids = append(lb.kids, rb.kids...)
		lb.n += rb.n
		L.sum = e.m.Add(L.sum, R.sum)
		b.kids = slices.Delete(b.kids, l+1, l+2)
		return
	}
	var moved []node[T, S, M]
	if nl > nr {
		moved = slices.Clone(lb.kids[half:])
		rb.kids = slices.Insert(rb.kids, 0, moved...)
		clear(lb.kids[half:])
		lb.kids = lb.kids[:half]
		if e.tr != nil {
			for j := range moved {
				e.tr.adopted(moved[j].ident(), rb.id)
			}
		}
	} else {
		moved = slices.Clone(rb.kids[:nr-half])
		lb.kids = append(lb.kids, moved...)
		rb.kids = slices.Delete(rb.kids, 0, nr-half)
		if e.tr != nil {
			for j := range moved {
				e.tr.adopted(moved[j].ident(), lb.id)
			}
		}
	}
	lb.n, rb.n = 0, 0
	for j := range lb.kids {
		lb.n += lb.kids[j].len()
	}
	for j := range rb.kids {
		rb.n += rb.kids[j].len()
	}
	e.resum(L)
	e.resum(R)
}

// build makes a tree of a copy of items, with leaves nearly full (see fill)
// and branches three quarters full. Each leaf has its own array, so that no
// leaf keeps the others' memory alive, and a flat one is its exact size.
func (e *editor[T, S, M]) build(items []T) node[T, S, M] {
	switch {
	case len(items) == 0:
		return node[T, S, M]{}
	case len(items) <= leafMax:
		return node[T, S, M]{lf: newLeaf(items, len(items)), sum: e.leafSum(items)}
	}
	level := make([]node[T, S, M], 0, len(items)/leafMax+1)
	for part := range parts(len(items), fill) {
		level = append(level, e.leaf(slices.Clone(items[part[0]:part[1]])))
	}
	return e.buildUp(level)
}

// leaf returns a new leaf of items.
func (e *editor[T, S, M]) leaf(items []T) node[T, S, M] {
	return node[T, S, M]{lf: &leaf[T]{items: items, id: newID()}, sum: e.leafSum(items)}
}

// buildUp makes the tree above a level of at least two nodes.
func (e *editor[T, S, M]) buildUp(level []node[T, S, M]) node[T, S, M] {
	for len(level) > 1 {
		up := make([]node[T, S, M], 0, len(level)/branchMax+1)
		for part := range parts(len(level), group) {
			up = append(up, e.branchOf(level[part[0]:part[1]]))
		}
		level = up
	}
	return level[0]
}

// branchOf returns a new branch of a copy of kids.
func (e *editor[T, S, M]) branchOf(kids []node[T, S, M]) node[T, S, M] {
	b := newBranch(kids, len(kids))
	b.id = newID()
	for k := range b.kids {
		b.n += b.kids[k].len()
		if e.tr != nil {
			e.tr.adopted(b.kids[k].ident(), b.id)
		}
	}
	return node[T, S, M]{br: b, sum: e.kidsSum(b.kids)}
}

// parts cuts n things into the fewest runs of at most size, all of nearly
// the same length, and yields each run's bounds.
func parts(n, size int) func(func([2]int) bool) {
	return func(yield func([2]int) bool) {
		runs := (n + size - 1) / size
		start := 0
		for r := range runs {
			end := start + n/runs
			if r < n%runs {
				end++
			}
			if !yield([2]int{start, end}) {
				return
			}
			start = end
		}
	}
}
