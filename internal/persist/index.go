// The name index of a Map: key hashes to the leaves that hold them, and nodes to their
// parents, as sorted persistent sequences of pairs.

package persist

import (
	"cmp"
	"hash/maphash"
	"slices"
)

// pair is one entry of an index: a key and what it maps to.
type pair struct{ k, v uint64 }

// pairMax summarises pairs by their greatest key, which lets a Seq of pairs
// sorted by key be searched like a B-tree of keys.
type pairMax struct{}

func (pairMax) Of(p pair) uint64               { return p.k }
func (pairMax) Add(a, b uint64) uint64         { return max(a, b) }
func (pairMax) Sub(a, b uint64) (uint64, bool) { return a, b < a }

// pairs is a persistent multimap from uint64 to uint64, sorted by key.
type pairs = Seq[pair, uint64, pairMax]

// seek returns the position of the first pair whose key is at least k, and
// that pair when there is one.
func seek(s *pairs, k uint64) (int, pair, bool) { return search(s, k, true) }

// search is seek, which counts the position only when count is true: a
// lookup needs the pair alone, and counting reads every child on the left
// of the path.
func search(s *pairs, k uint64, count bool) (int, pair, bool) {
	c, pos := &s.root, 0
	for c.br != nil {
		// The children's greatest keys rise: find the first that reaches k,
		// or the last child.
		kids := c.br.kids
		lo, hi := 0, len(kids)-1
		for lo < hi {
			if mid := int(uint(lo+hi) >> 1); kids[mid].sum < k {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		for j := 0; count && j < lo; j++ {
			pos += kids[j].len()
		}
		c = &kids[lo]
	}
	items := c.items()
	lo, hi := 0, len(items)
	for lo < hi {
		if mid := int(uint(lo+hi) >> 1); items[mid].k < k {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(items) {
		return pos + lo, pair{}, false
	}
	return pos + lo, items[lo], true
}

// lookup returns the value of the first pair with key k.
func lookup(s *pairs, k uint64) (uint64, bool) {
	_, p, ok := search(s, k, false)
	if !ok || p.k != k {
		return 0, false
	}
	return p.v, true
}

// find returns the position of the pair (k, v), or -1.
func find(s *pairs, k, v uint64) int {
	i, p, ok := seek(s, k)
	for ok && p.k == k {
		if p.v == v {
			return i
		}
		if i++; i == s.Len() {
			break
		}
		p = s.At(i)
	}
	return -1
}

// index is what a Map that is a tree knows beyond its entries: which leaf
// holds each key, and the parent of each node, so that it can find a key's
// leaf from the root and count the entries before it. Both are persistent,
// so an edit changes O(log n) of them. The index hears every move of the
// Map's tree (it is its tracker) and follows it.
type index[V any] struct {
	tok    uint64 // the token that may change the index in place
	o      *Owner // the Owner of tok, or nil
	leaves pairs  // hash of a key → the leaf holding it; one pair per key
	up     pairs  // node → its parent; one pair per node but the root
	hint   hint   // the key that the edit under way inserts or removes
}

// hint is what a Map's lookup found of the one key that an edit inserts
// or removes, so that the index need not hash the key and search for it
// again: the key's hash, and 1 + the position of its pair in leaves, or
// of where its pair goes; at is 0 when no lookup came first. The edit
// changes no pair of leaves before it places or removes the key.
type hint struct {
	h  uint64
	at int
}

var seed = maphash.MakeSeed()

// hash hashes a key with a seed chosen when the program starts, so that no
// producer can choose keys that collide. Tests replace it with a weak one.
var hash = func(key string) uint64 { return maphash.String(seed, key) }

// ed returns the editor of the index's pairs: one of the same batch as the
// edit of the Map that the index follows.
func (x *index[V]) ed() *editor[pair, uint64, pairMax] {
	return &editor[pair, uint64, pairMax]{tok: x.tok, o: x.o}
}

func (x *index[V]) placed(v Entry[V], leaf uint64) {
	if hn := x.hint; hn.at > 0 {
		x.hint = hint{}
		x.leaves.root = x.ed().insertRoot(x.leaves.root, hn.at-1, pair{hn.h, leaf})
		return
	}
	x.add(&x.leaves, pair{hash(v.Key), leaf})
}

func (x *index[V]) removed(v Entry[V], leaf uint64) {
	if at := x.hint.at; at > 0 {
		x.hint = hint{}
		x.leaves.root, _ = x.ed().removeRoot(x.leaves.root, at-1)
		return
	}
	x.del(&x.leaves, pair{hash(v.Key), leaf})
}

func (x *index[V]) moved(vs []Entry[V], from, to uint64) {
	for _, v := range vs {
		h := hash(v.Key)
		i := find(&x.leaves, h, from)
		if i < 0 {
			panic("persist: index lost a key")
		}
		x.set(&x.leaves, i, pair{h, to})
	}
}

func (x *index[V]) adopted(kid, parent uint64) {
	i, p, ok := seek(&x.up, kid)
	switch {
	case ok && p.k == kid && parent == 0:
		x.up.root, _ = x.ed().removeRoot(x.up.root, i)
	case ok && p.k == kid:
		x.set(&x.up, i, pair{kid, parent})
	case parent != 0:
		x.up.root = x.ed().insertRoot(x.up.root, i, pair{kid, parent})
	}
}

func (x *index[V]) dropped(id uint64) {
	if i, p, ok := seek(&x.up, id); ok && p.k == id {
		x.up.root, _ = x.ed().removeRoot(x.up.root, i)
	}
}

func (x *index[V]) set(s *pairs, i int, p pair) {
	x.ed().update(&s.root, i, func(pair) pair { return p })
}

func (x *index[V]) add(s *pairs, p pair) {
	i, _, _ := seek(s, p.k)
	s.root = x.ed().insertRoot(s.root, i, p)
}

func (x *index[V]) del(s *pairs, p pair) {
	i := find(s, p.k, p.v)
	if i < 0 {
		panic("persist: index lost a key")
	}
	s.root, _ = x.ed().removeRoot(s.root, i)
}

// buildIndex makes the index of the tree root from scratch, in O(n log n),
// and reports whether two keys have the same hash.
func buildIndex[V, S any, M Measure[Entry[V], S]](root *node[Entry[V], S, M]) (*index[V], bool) {
	leaves, up := indexPairs(root, nil, nil)
	slices.SortFunc(leaves, comparePairs)
	slices.SortFunc(up, comparePairs)
	collide := false
	for i := 1; i < len(leaves) && !collide; i++ {
		collide = leaves[i].k == leaves[i-1].k
	}
	return &index[V]{leaves: SeqOf[pair, uint64, pairMax](leaves...), up: SeqOf[pair, uint64, pairMax](up...)}, collide
}

// indexPairs appends to leaves a pair of each key's hash and its leaf's
// identity, and to up a pair of each node's identity and its parent's, for
// the tree c. It is a function, not a closure, so that c does not escape:
// a Map's edits pass the address of their copy of the root.
func indexPairs[V, S any, M Measure[Entry[V], S]](c *node[Entry[V], S, M], leaves, up []pair) ([]pair, []pair) {
	if c.br == nil {
		for _, v := range c.items() {
			leaves = append(leaves, pair{hash(v.Key), c.lf.id})
		}
		return leaves, up
	}
	for k := range c.br.kids {
		up = append(up, pair{c.br.kids[k].ident(), c.br.id})
		leaves, up = indexPairs(&c.br.kids[k], leaves, up)
	}
	return leaves, up
}

func comparePairs(a, b pair) int { return cmp.Compare(a.k, b.k) }

// distinct reports whether no two entries share a key.
func distinct[V any](entries []Entry[V]) bool {
	if len(entries) <= 8 {
		for i := range entries {
			for j := range i {
				if entries[j].Key == entries[i].Key {
					return false
				}
			}
		}
		return true
	}
	hs := make([]pair, len(entries))
	for i, v := range entries {
		hs[i] = pair{hash(v.Key), uint64(i)}
	}
	slices.SortFunc(hs, comparePairs)
	for i := 1; i < len(hs); i++ {
		for j := i - 1; j >= 0 && hs[j].k == hs[i].k; j-- {
			if entries[hs[j].v].Key == entries[hs[i].v].Key {
				return false
			}
		}
	}
	return true
}
