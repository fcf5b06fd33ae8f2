// Keyed sets: the open constructs and the run's scopes, each found by its
// key and kept in the order it was put in.

package aguistate

import (
	"iter"

	"github.com/aguistate/aguistate/internal/persist"
)

// keyed is what a keyedSet holds: an item that names its own key, and its
// size in bytes, which the set adds up.
type keyed interface {
	key() string
	size() int
}

// keyedSet is a persistent set of items, one per key, kept in the order
// they were put in: the order a checkpoint and a prelude write them.
// Finding, putting and removing an item cost O(log n), and so does an edit
// of a set that an earlier view shares: it copies O(log n) of the set and
// shares the rest (see persist.Map). The total size of the items costs
// nothing to read. The zero keyedSet is empty.
//
// Its edits change the set in place, which is a value of its own: the set
// of another view, copied from it, stays as it was. Each takes the Owner
// of the change (see txn.ed), so that a change that puts many items, such
// as Restore, copies each node at most once.
type keyedSet[V keyed] struct {
	m persist.Map[V, int, keyedMeasure[V]]
}

// keyedMeasure sums the sizes of a keyedSet's items.
type keyedMeasure[V keyed] struct{}

func (keyedMeasure[V]) Of(e persist.Entry[V]) int { return e.Value.size() }
func (keyedMeasure[V]) Add(a, b int) int          { return a + b }
func (keyedMeasure[V]) Sub(a, b int) (int, bool)  { return a - b, true }

// Len returns the number of items.
func (s *keyedSet[V]) Len() int { return s.m.Len() }

// size returns the total size of the items.
func (s *keyedSet[V]) size() int { return s.m.Summary() }

// get returns the item with key, and whether the set holds one.
func (s *keyedSet[V]) get(key string) (V, bool) { return s.m.Get(key) }

// has reports whether the set holds an item with key.
func (s *keyedSet[V]) has(key string) bool { return s.m.Index(key) >= 0 }

// put puts v in the set: in the place of the item with its key, or last
// when the set holds none.
func (s *keyedSet[V]) put(o *persist.Owner, v V) { s.m = s.m.Set(o, v.key(), v) }

// add puts v last in the set unless the set holds an item with v's key,
// and reports whether it did: a put that finds the key once.
func (s *keyedSet[V]) add(o *persist.Owner, v V) bool {
	m, ok := s.m.Insert(o, s.m.Len(), v.key(), v)
	s.m = m
	return ok
}

// remove removes the item with key, if the set holds one.
func (s *keyedSet[V]) remove(o *persist.Owner, key string) { s.m, _, _ = s.m.Delete(o, key) }

// all yields the items in order.
func (s *keyedSet[V]) all() iter.Seq[V] {
	return func(yield func(V) bool) {
		for entries := range s.m.Chunks() {
			for _, e := range entries {
				if !yield(e.Value) {
					return
				}
			}
		}
	}
}
