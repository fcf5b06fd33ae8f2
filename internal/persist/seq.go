// Seq: a persistent sequence with positional edits in O(log n), and its Builder.

package persist

import (
	"fmt"
	"iter"
	"slices"
)

// Seq is a persistent sequence of elements of type T that keeps the summary
// S of its elements, defined by the Measure M. Reading an element, changing
// one, inserting or deleting one anywhere costs O(log n); reading the length
// or the summary costs O(1). A Seq of at most [FlatMax] elements is one slice.
//
// The zero Seq is empty and ready to use. A Seq is a small value: copy it
// freely. Edits return the new Seq; with a nil *Owner they leave the old one
// as it was, and with an Owner they may change values made earlier with the
// same Owner (see the package documentation).
type Seq[T, S any, M Measure[T, S]] struct {
	root node[T, S, M]
}

// SeqOf returns a Seq of a copy of items, in O(len(items)).
func SeqOf[T, S any, M Measure[T, S]](items ...T) Seq[T, S, M] {
	var e editor[T, S, M]
	return Seq[T, S, M]{root: e.build(items)}
}

// Builder makes a Seq of elements given in order, as [SeqOf] does, without
// needing a slice of them all: it keeps fewer than a leaf's worth of
// elements and, at each height, fewer than two branches' worth of nodes
// that wait for a parent, so that the memory it needs beyond the Seq is
// O(log n). The zero Builder is ready to use.
type Builder[T, S any, M Measure[T, S]] struct {
	e      editor[T, S, M]
	levels [][]node[T, S, M] // levels[h]: nodes of height h (0 for leaves) without a parent
	rest   []T
}

// group is how many children the branches a Builder (or SeqOf) makes have:
// three quarters of the most, so that inserts seldom split them.
const group = branchMax * 3 / 4

// Add appends items, copying them.
func (b *Builder[T, S, M]) Add(items ...T) {
	for len(items) > 0 {
		if len(b.rest) == 0 && len(items) >= fill {
			b.push(0, b.e.leaf(slices.Clone(items[:fill])))
			items = items[fill:]
			continue
		}
		if b.rest == nil {
			b.rest = make([]T, 0, fill)
		}
		k := min(fill-len(b.rest), len(items))
		b.rest, items = append(b.rest, items[:k]...), items[k:]
		if len(b.rest) == fill {
			b.push(0, b.e.leaf(b.rest))
			b.rest = nil
		}
	}
}

// push adds c to the nodes of height h without a parent. When there are
// two groups of them, the first becomes a branch of height h+1: a level
// that has made a branch keeps at least a group, so that Seq can give its
// last nodes to branches of at least branchMin.
func (b *Builder[T, S, M]) push(h int, c node[T, S, M]) {
	if h == len(b.levels) {
		b.levels = append(b.levels, make([]node[T, S, M], 0, 2*group))
	}
	level := append(b.levels[h], c)
	if len(level) == 2*group {
		parent := b.e.branchOf(level[:group])
		n := copy(level, level[group:])
		clear(level[n:])
		level = level[:n]
		b.levels[h] = level
		b.push(h+1, parent)
		return
	}
	b.levels[h] = level
}

// Seq returns the Seq of the elements added, and empties b.
func (b *Builder[T, S, M]) Seq() Seq[T, S, M] {
	levels, rest := b.levels, b.rest
	*b = Builder[T, S, M]{}
	if len(levels) == 0 {
		return SeqOf[T, S, M](rest...)
	}
	leaves := levels[0]
	switch {
	case len(rest) >= leafMin:
		leaves = append(leaves, b.e.leaf(rest))
	case len(rest) > 0: // too few for a leaf: the last leaf takes them, or shares them
		last := leaves[len(leaves)-1].items()
		all := append(slices.Clip(last), rest...)
		if len(all) <= leafMax {
			leaves[len(leaves)-1] = b.e.leaf(all)
		} else {
			half := len(all) / 2
			leaves[len(leaves)-1] = b.e.leaf(all[:half:half])
			leaves = append(leaves, b.e.leaf(all[half:]))
		}
	}
	levels[0] = leaves
	for h := 0; ; h++ {
		level := levels[h]
		if h == len(levels)-1 && len(level) == 1 {
			root := level[0]
			if h == 0 {
				root.lf.id = 0
			}
			return Seq[T, S, M]{root: root}
		}
		if h+1 == len(levels) {
			levels = append(levels, nil)
		}
		for part := range parts(len(level), group) {
			levels[h+1] = append(levels[h+1], b.e.branchOf(level[part[0]:part[1]]))
		}
	}
}

// Len returns the number of elements.
func (s Seq[T, S, M]) Len() int { return s.root.len() }

// Summary returns the Add of the summaries of all elements, or the zero S
// for an empty Seq.
func (s Seq[T, S, M]) Summary() S { return s.root.sum }

// At returns the element at position i, which must be in [0, Len).
func (s Seq[T, S, M]) At(i int) T {
	s.check(i, s.Len())
	c := &s.root
	for c.br != nil {
		k, off := c.br.locate(i)
		c, i = &c.br.kids[k], off
	}
	return c.lf.items[i]
}

// Stat returns Len and Summary together. It reads them through a pointer:
// the value methods copy s first, which costs more than reading them.
func (s *Seq[T, S, M]) Stat() (int, S) { return s.root.len(), s.root.sum }

// Flat returns the elements when s is a single leaf, as every Seq of at
// most [FlatMax] elements but some that shrank to it are, and false
// otherwise. The caller must not change them.
func (s Seq[T, S, M]) Flat() ([]T, bool) { return s.root.items(), s.root.br == nil }

// Prefix returns the Add of the summaries of the elements before position i,
// in [0, Len], in O(log n).
func (s Seq[T, S, M]) Prefix(i int) S {
	s.check(i, s.Len()+1)
	var m M
	var acc S
	c := &s.root
	for c.br != nil {
		if i == c.br.n {
			return m.Add(acc, c.sum)
		}
		k := 0
		for ; i >= c.br.kids[k].len(); k++ {
			acc = m.Add(acc, c.br.kids[k].sum)
			i -= c.br.kids[k].len()
		}
		c = &c.br.kids[k]
	}
	for _, v := range c.items()[:i] {
		acc = m.Add(acc, m.Of(v))
	}
	return acc
}

// Search returns the smallest position i such that f is true of the Add of
// the summaries of the elements up to and including i, or Len when there is
// none, in O(log n). f must be monotone: once true of a run of elements from
// the start, true of every longer one.
func (s Seq[T, S, M]) Search(f func(S) bool) int {
	var m M
	var acc S
	pos := 0
	c := &s.root
	if !f(c.sum) {
		return s.Len()
	}
	for c.br != nil {
		k := 0
		for ; k < len(c.br.kids)-1; k++ {
			next := m.Add(acc, c.br.kids[k].sum)
			if f(next) {
				break
			}
			acc = next
			pos += c.br.kids[k].len()
		}
		c = &c.br.kids[k]
	}
	for j, v := range c.items() {
		if acc = m.Add(acc, m.Of(v)); f(acc) {
			return pos + j
		}
	}
	return s.Len()
}

// Seek returns the position of the first element whose own summary f is
// true of, that element, and true; or Len, the zero T and false when there
// is none. It costs O(log n), by binary search, for a Seq sorted so that f
// is false of a run of elements and true of the rest, and whose summary of
// a run f is true of exactly when it is true of one of its elements: the
// greatest key of elements sorted by key.
func (s Seq[T, S, M]) Seek(f func(S) bool) (int, T, bool) {
	var m M
	pos := 0
	c := &s.root
	for c.br != nil {
		kids := c.br.kids
		lo, hi := 0, len(kids)-1
		for lo < hi {
			if mid := int(uint(lo+hi) >> 1); !f(kids[mid].sum) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		for k := range lo {
			pos += kids[k].len()
		}
		c = &kids[lo]
	}
	items := c.items()
	lo, hi := 0, len(items)
	for lo < hi {
		if mid := int(uint(lo+hi) >> 1); !f(m.Of(items[mid])) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(items) {
		var zero T
		return pos + lo, zero, false
	}
	return pos + lo, items[lo], true
}

// All yields the positions and elements in order.
func (s Seq[T, S, M]) All() iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		i := 0
		s.root.walk(&i, yield)
	}
}

// Chunks yields the elements in order, one leaf at a time. Each run is the
// leaf's own storage: the caller must not change it. Two Seqs that share a
// leaf yield the very same run, which lets a comparison skip it.
func (s Seq[T, S, M]) Chunks() iter.Seq[[]T] {
	return func(yield func([]T) bool) { s.root.chunks(yield) }
}

// Set returns s with the element at position i, in [0, Len), replaced by v.
func (s Seq[T, S, M]) Set(o *Owner, i int, v T) Seq[T, S, M] {
	return s.Update(o, i, func(T) T { return v })
}

// Update returns s with the element at position i, in [0, Len), replaced by
// f of it. The old element is measured before f is called once, so f may
// change it in place when the caller owns it.
func (s Seq[T, S, M]) Update(o *Owner, i int, f func(T) T) Seq[T, S, M] {
	s.check(i, s.Len())
	e := editor[T, S, M]{tok: o.token(), o: o}
	e.update(&s.root, i, f)
	return s
}

// SetIn is [Seq.Set] for a caller that keeps a header of type P beside
// the Seq, such as the node of a JSON array, and that measured the old
// element (os) and the new one (ns) itself: no Measure.Of runs. It changes
// *s, the caller's copy, to the new Seq. When *s is one flat leaf that the
// edit copies, the copy is allocated together with a zero P, which SetIn
// returns, so that the header and the elements cost one allocation.
// Otherwise it returns nil.
func SetIn[P, T, S any, M Measure[T, S]](s *Seq[T, S, M], o *Owner, i int, v T, os, ns S) *P {
	s.check(i, s.root.len()) // not s.Len(), which would copy *s
	e := editor[T, S, M]{tok: o.token(), o: o}
	c := &s.root
	if c.br == nil && c.lf.own != e.tok {
		p := copyFlatIn[P](&e, c) // a copy the editor owns: set it in place
		c.lf.items[i] = v
		e.replace(c, os, ns)
		return p
	}
	e.set(c, i, v, os, ns)
	return nil
}

// Insert returns s with v inserted before position i, in [0, Len]; i = Len
// appends.
func (s Seq[T, S, M]) Insert(o *Owner, i int, v T) Seq[T, S, M] {
	s.check(i, s.Len()+1)
	e := editor[T, S, M]{tok: o.token(), o: o}
	return Seq[T, S, M]{root: e.insertRoot(s.root, i, v)}
}

// Append returns s with v added after its last element.
func (s Seq[T, S, M]) Append(o *Owner, v T) Seq[T, S, M] { return s.Insert(o, s.Len(), v) }

// Delete returns s without the element at position i, in [0, Len), and that
// element.
func (s Seq[T, S, M]) Delete(o *Owner, i int) (Seq[T, S, M], T) {
	s.check(i, s.Len())
	e := editor[T, S, M]{tok: o.token(), o: o}
	root, old := e.removeRoot(s.root, i)
	return Seq[T, S, M]{root: root}, old
}

func (s *Seq[T, S, M]) check(i, n int) {
	if i < 0 || i >= n {
		panic(fmt.Sprintf("persist: position %d out of range [0, %d)", i, n))
	}
}

func (e *editor[T, S, M]) insertRoot(root node[T, S, M], i int, v T) node[T, S, M] {
	right, split := e.insert(&root, i, v, e.m.Of(v), i == root.len())
	if split {
		root = e.grow(root, right)
	}
	return root
}

// removeRoot removes the element at position i of the tree root. Taking
// out the last element leaves the empty sequence, which needs no leaf: the
// leaf is not copied to be emptied.
func (e *editor[T, S, M]) removeRoot(root node[T, S, M], i int) (node[T, S, M], T) {
	if root.br == nil && root.len() == 1 {
		old := root.lf.items[i]
		if e.tr != nil {
			e.tr.removed(old, root.lf.id)
		}
		return node[T, S, M]{}, old
	}
	old, _ := e.remove(&root, i)
	return e.shrink(root), old
}
