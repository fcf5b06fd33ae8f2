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

// SeqOf returns a Seq of items, in O(len(items)). When there are at most
// [FlatMax], the Seq keeps items as its storage, and the caller must not
// change them afterwards; more are copied.
func SeqOf[T, S any, M Measure[T, S]](items ...T) Seq[T, S, M] {
	var e editor[T, S, M]
	return Seq[T, S, M]{root: e.build(items)}
}

// Builder makes a Seq of elements given in order, as [SeqOf] does, without
// needing a slice of them all: it keeps the leaves it has filled and fewer
// than a leaf's worth more. The zero Builder is ready to use.
type Builder[T, S any, M Measure[T, S]] struct {
	e      editor[T, S, M]
	leaves []node[T, S, M]
	rest   []T
}

// Add appends items, copying them.
func (b *Builder[T, S, M]) Add(items ...T) {
	for len(items) > 0 {
		if len(b.rest) == 0 && len(items) >= fill {
			b.leaves = append(b.leaves, b.e.leaf(slices.Clone(items[:fill])))
			items = items[fill:]
			continue
		}
		if b.rest == nil {
			b.rest = make([]T, 0, fill)
		}
		k := min(fill-len(b.rest), len(items))
		b.rest, items = append(b.rest, items[:k]...), items[k:]
		if len(b.rest) == fill {
			b.leaves = append(b.leaves, b.e.leaf(b.rest))
			b.rest = nil
		}
	}
}

// Seq returns the Seq of the elements added, and empties b.
func (b *Builder[T, S, M]) Seq() Seq[T, S, M] {
	leaves, rest := b.leaves, b.rest
	*b = Builder[T, S, M]{}
	switch {
	case len(leaves) == 0:
		return SeqOf[T, S, M](rest...)
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
	if len(leaves) == 1 {
		leaves[0].lf.id = 0
		return Seq[T, S, M]{root: leaves[0]}
	}
	return Seq[T, S, M]{root: b.e.buildUp(leaves)}
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

func (s Seq[T, S, M]) check(i, n int) {
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

func (e *editor[T, S, M]) removeRoot(root node[T, S, M], i int) (node[T, S, M], T) {
	old, _ := e.remove(&root, i)
	return e.shrink(root), old
}
