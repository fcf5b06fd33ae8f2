// Map: members in order, found by name, as a persistent sequence of entries with a name index.

package persist

import (
	"fmt"
	"iter"
)

// Entry is one key and its value in a [Map].
type Entry[V any] struct {
	Key   string
	Value V
}

// Map is a persistent map from string keys to values of type V that keeps
// its entries in the order they were put in, and the summary S of its
// entries, defined by the Measure M. Every operation costs O(log n) at most:
// reading, changing, inserting or deleting an entry by key or by position,
// and finding a key's position. A Map of at most [FlatMax] entries is one slice,
// searched from the start; a larger one also keeps a persistent index of
// which leaf holds each key (see the package documentation).
//
// The zero Map is empty and ready to use. Copy it freely; edits follow the
// same rules as those of [Seq].
type Map[V, S any, M Measure[Entry[V], S]] struct {
	seq Seq[Entry[V], S, M]
	ix  *index[V] // nil while the entries are one leaf
}

// MapOf returns a Map of a copy of entries, in their order, in O(n log n),
// or false when two entries share a key.
func MapOf[V, S any, M Measure[Entry[V], S]](entries ...Entry[V]) (Map[V, S, M], bool) {
	if len(entries) <= leafMax && !distinct(entries) {
		return Map[V, S, M]{}, false
	}
	m := Map[V, S, M]{seq: SeqOf[Entry[V], S, M](entries...)}
	if m.seq.root.br != nil {
		// The index sorts the keys' hashes: two keys can be the same only
		// where two hashes are.
		var collide bool
		m.ix, collide = buildIndex(&m.seq.root)
		if collide && !distinct(entries) {
			return Map[V, S, M]{}, false
		}
	}
	return m, true
}

// Len returns the number of entries.
func (m Map[V, S, M]) Len() int { return m.seq.Len() }

// Summary returns the Add of the summaries of all entries.
func (m Map[V, S, M]) Summary() S { return m.seq.Summary() }

// Stat returns Len and Summary together, as [Seq.Stat] does.
func (m *Map[V, S, M]) Stat() (int, S) { return m.seq.Stat() }

// Flat returns the entries when m is a single leaf, as [Seq.Flat] does.
func (m Map[V, S, M]) Flat() ([]Entry[V], bool) { return m.seq.Flat() }

// Prefix returns the Add of the summaries of the entries before position i,
// in [0, Len], as [Seq.Prefix] does.
func (m Map[V, S, M]) Prefix(i int) S { return m.seq.Prefix(i) }

// Search returns the smallest position i such that f is true of the Add of
// the summaries of the entries up to and including i, or Len, as
// [Seq.Search] does.
func (m Map[V, S, M]) Search(f func(S) bool) int { return m.seq.Search(f) }

// At returns the key and value at position i, in [0, Len).
func (m Map[V, S, M]) At(i int) (string, V) {
	v := m.seq.At(i)
	return v.Key, v.Value
}

// All yields the keys and values in order.
func (m Map[V, S, M]) All() iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		for _, v := range m.seq.All() {
			if !yield(v.Key, v.Value) {
				return
			}
		}
	}
}

// Chunks yields the entries in order, one leaf at a time, as [Seq.Chunks]
// does.
func (m Map[V, S, M]) Chunks() iter.Seq[[]Entry[V]] { return m.seq.Chunks() }

// Get returns the value of key, and whether m has it.
func (m Map[V, S, M]) Get(key string) (V, bool) {
	i, v := m.Find(key)
	return v, i >= 0
}

// Index returns the position of key, or -1 when m does not have it.
func (m Map[V, S, M]) Index(key string) int {
	i, _ := m.Find(key)
	return i
}

// Find returns the position and value of key, or -1 and the zero V when m
// does not have it. It reads *m in place, as [Map.Stat] does: a step down
// a path of containers finds each child by name.
func (m *Map[V, S, M]) Find(key string) (int, V) {
	i, v, _ := m.probe(key)
	return i, v
}

// probe is [Map.Find] that also returns where key's hash is in the index:
// where its pair is when m has key, or where its pair would go when it
// does not (none when m has no index). An edit of key that follows at once
// hands it to the index, which then need not hash and search again.
func (m *Map[V, S, M]) probe(key string) (int, V, hint) {
	var zero V
	if m.ix == nil {
		for i, v := range m.seq.root.items() {
			if v.Key == key {
				return i, v.Value, hint{}
			}
		}
		return -1, zero, hint{}
	}
	h := hash(key)
	leaves := &m.ix.leaves
	at, p, ok := seek(leaves, h)
	for i := at; ok && p.k == h; {
		if pos, v, found := m.inLeaf(p.v, key); found {
			return pos, v, hint{h, i + 1}
		}
		if i++; i == leaves.Len() {
			break
		}
		p = leaves.At(i)
	}
	return -1, zero, hint{h, at + 1}
}

// maxHeight bounds the height of a tree: with at least branchMin children
// per branch, 2^63 entries need fewer levels.
const maxHeight = 32

// inLeaf looks for key in the leaf of identity id: it climbs the parents in
// the index to the root, walks back down counting the entries before each
// node on the way, and searches the leaf.
func (m *Map[V, S, M]) inLeaf(id uint64, key string) (int, V, bool) {
	var path [maxHeight]uint64
	d := 0
	for ; ; d++ {
		path[d] = id
		parent, ok := lookup(&m.ix.up, id)
		if !ok {
			break
		}
		id = parent
	}
	c := &m.seq.root
	if c.ident() != path[d] {
		panic("persist: index lost the root")
	}
	pos := 0
	for d--; d >= 0; d-- {
		kids := c.br.kids
		k := 0
		for kids[k].ident() != path[d] {
			pos += kids[k].len()
			k++
		}
		c = &kids[k]
	}
	for i, v := range c.items() {
		if v.Key == key {
			return pos + i, v.Value, true
		}
	}
	var zero V
	return -1, zero, false
}

// begin returns the editor of one edit of m's entries. A tree's index is
// made one that the editor may change, and follows the edit; hn is what
// a lookup found of the key that the edit inserts or removes, if any.
func (m *Map[V, S, M]) begin(o *Owner, hn hint) editor[Entry[V], S, M] {
	e := editor[Entry[V], S, M]{tok: o.token(), o: o}
	if m.ix != nil {
		if m.ix.tok != e.tok {
			ix := *m.ix
			ix.tok, ix.o = e.tok, o
			m.ix = &ix
		}
		m.ix.hint = hn
		e.tr = m.ix
	}
	return e
}

// end builds the index when the edit made the entries a tree, and drops it
// when they became one leaf.
func (m *Map[V, S, M]) end(e *editor[Entry[V], S, M]) {
	switch {
	case m.seq.root.br == nil:
		m.ix = nil
	case m.ix == nil:
		m.ix, _ = buildIndex(&m.seq.root)
		m.ix.tok, m.ix.o = e.tok, e.o
	default:
		m.ix.hint = hint{}
	}
}

// Set returns m with key's value replaced by v where it is, or with key and v
// appended after the last entry when m does not have key.
func (m Map[V, S, M]) Set(o *Owner, key string, v V) Map[V, S, M] {
	m, _, _ = m.Put(o, key, v)
	return m
}

// Put is [Map.Set] that also returns the value it replaced, and whether m
// had key.
func (m Map[V, S, M]) Put(o *Owner, key string, v V) (Map[V, S, M], V, bool) {
	i, old, hn := m.probe(key)
	if i >= 0 {
		return m.UpdateAt(o, i, func(V) V { return v }), old, true
	}
	return m.insert(o, m.Len(), key, v, hn), old, false
}

// Update returns m with key's value replaced by f of it, or m and false when
// m does not have key. As with [Seq.Update], f may change the old value in
// place when the caller owns it.
func (m Map[V, S, M]) Update(o *Owner, key string, f func(V) V) (Map[V, S, M], bool) {
	i := m.Index(key)
	if i < 0 {
		return m, false
	}
	return m.UpdateAt(o, i, f), true
}

// UpdateAt returns m with the value at position i, in [0, Len), replaced
// by f of it.
func (m Map[V, S, M]) UpdateAt(o *Owner, i int, f func(V) V) Map[V, S, M] {
	m.seq = m.seq.Update(o, i, func(v Entry[V]) Entry[V] {
		v.Value = f(v.Value)
		return v
	})
	return m
}

// SetAtIn is [Map.UpdateAt] that sets the value at position i to v, for
// a caller that keeps a header of type P beside the Map and measured the
// old entry (os) and the new one (ns) itself, as [SetIn] does for a Seq:
// it changes *m, the caller's copy, and returns the P allocated with a
// flat copy, or nil. key must be the key at position i, which the caller
// found it by.
func SetAtIn[P, V, S any, M Measure[Entry[V], S]](m *Map[V, S, M], o *Owner, i int, key string, v V, os, ns S) *P {
	return SetIn[P](&m.seq, o, i, Entry[V]{key, v}, os, ns)
}

// Insert returns m with key and v inserted before position i, in [0, Len],
// or m and false when m has key already.
func (m Map[V, S, M]) Insert(o *Owner, i int, key string, v V) (Map[V, S, M], bool) {
	m.seq.check(i, m.Len()+1)
	j, _, hn := m.probe(key)
	if j >= 0 {
		return m, false
	}
	return m.insert(o, i, key, v, hn), true
}

// InsertAfter returns m with key and v inserted right after the entry of
// after, or m and false when m has key already or does not have after.
func (m Map[V, S, M]) InsertAfter(o *Owner, after, key string, v V) (Map[V, S, M], bool) {
	i := m.Index(after)
	if i < 0 {
		return m, false
	}
	j, _, hn := m.probe(key)
	if j >= 0 {
		return m, false
	}
	return m.insert(o, i+1, key, v, hn), true
}

func (m Map[V, S, M]) insert(o *Owner, i int, key string, v V, hn hint) Map[V, S, M] {
	e := m.begin(o, hn)
	m.seq.root = e.insertRoot(m.seq.root, i, Entry[V]{key, v})
	m.end(&e)
	return m
}

// Delete returns m without key, and key's value; or m and false when m does
// not have key.
func (m Map[V, S, M]) Delete(o *Owner, key string) (Map[V, S, M], V, bool) {
	i, v, hn := m.probe(key)
	if i < 0 {
		return m, v, false
	}
	m, _ = m.deleteAt(o, i, hn)
	return m, v, true
}

// DeleteAt returns m without the entry at position i, in [0, Len), and that
// entry's key and value.
func (m Map[V, S, M]) DeleteAt(o *Owner, i int) (Map[V, S, M], string, V) {
	if i < 0 || i >= m.Len() {
		panic(fmt.Sprintf("persist: position %d out of range [0, %d)", i, m.Len()))
	}
	m, old := m.deleteAt(o, i, hint{})
	return m, old.Key, old.Value
}

func (m Map[V, S, M]) deleteAt(o *Owner, i int, hn hint) (Map[V, S, M], Entry[V]) {
	e := m.begin(o, hn)
	var old Entry[V]
	m.seq.root, old = e.removeRoot(m.seq.root, i)
	m.end(&e)
	return m, old
}
