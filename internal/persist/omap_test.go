// Tests of Map against a slice-and-map model.

package persist

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entryStat measures an entry as its key's length plus its value.
type entryStat struct{}

func (entryStat) Of(v Entry[int]) stat       { return statOf{}.Of(len(v.Key) + v.Value) }
func (entryStat) Add(a, b stat) stat         { return statOf{}.Add(a, b) }
func (entryStat) Sub(a, b stat) (stat, bool) { return statOf{}.Sub(a, b) }

type imap = Map[int, stat, entryStat]

func entries(n int) []Entry[int] {
	es := make([]Entry[int], n)
	for i := range es {
		es[i] = Entry[int]{fmt.Sprintf("k%d", i), i}
	}
	return es
}

func sortPairs(ps []pair) []pair {
	return slices.SortedFunc(slices.Values(ps), func(a, b pair) int {
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return c
		}
		return cmp.Compare(a.v, b.v)
	})
}

func pairSlice(s pairs) []pair {
	var ps []pair
	for _, p := range s.All() {
		ps = append(ps, p)
	}
	return ps
}

// checkMap checks m against the model want: its entries and their
// summaries, its index against one built from scratch, and every lookup.
func checkMap(t testing.TB, m imap, want []Entry[int]) {
	t.Helper()
	checkSeq(t, m.seq, want)
	n, sum := m.Stat()
	require.Equal(t, len(want), n, "Stat's Len")
	require.Equal(t, m.Summary(), sum, "Stat's Summary")
	if m.seq.root.br == nil {
		require.Nil(t, m.ix, "a flat Map has no index")
	} else {
		require.NotNil(t, m.ix, "a tree Map has an index")
		fresh, _ := buildIndex(&m.seq.root)
		for _, s := range []struct {
			name       string
			got, fresh pairs
		}{{"leaves", m.ix.leaves, fresh.leaves}, {"up", m.ix.up, fresh.up}} {
			got := pairSlice(s.got)
			require.True(t, slices.IsSortedFunc(got, comparePairs), "%s is sorted", s.name)
			checkSeq(t, s.got, got)
			require.Equal(t, sortPairs(pairSlice(s.fresh)), sortPairs(got), "%s", s.name)
		}
	}
	for i, e := range want {
		if got := m.Index(e.Key); got != i {
			require.Equal(t, i, got, "Index(%q)", e.Key)
		}
		if v, ok := m.Get(e.Key); !ok || v != e.Value {
			require.Equal(t, e.Value, v, "Get(%q) reports %v", e.Key, ok)
		}
		if k, v := m.At(i); k != e.Key || v != e.Value {
			require.Equal(t, e, Entry[int]{k, v}, "At(%d)", i)
		}
	}
	_, ok := m.Get("absent")
	require.False(t, ok)
	require.Equal(t, -1, m.Index("absent"))
}

func TestMapOf(t *testing.T) {
	for _, tt := range []struct {
		name   string
		es     []Entry[int]
		ok     bool
		reason string
	}{
		{"empty", nil, true, "the zero Map"},
		{"flat", entries(10), true, "one leaf, searched in order"},
		{"tree", entries(10_000), true, "an index is built"},
		{"repeat in a few", []Entry[int]{{"a", 1}, {"b", 2}, {"a", 3}}, false, "keys are distinct"},
		{"repeat in many", append(entries(100), Entry[int]{"k7", 0}), false, "keys are distinct, found through hashes"},
		{"empty key", []Entry[int]{{"", 1}, {"a", 2}}, true, "the empty key is a key like any other"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := MapOf[int, stat, entryStat](slices.Clone(tt.es)...)
			require.Equal(t, tt.ok, ok, tt.reason)
			if ok {
				checkMap(t, m, tt.es)
			}
		})
	}
}

func TestMapEdits(t *testing.T) {
	for _, tt := range []struct {
		name   string
		n      int
		edit   func(imap) (imap, bool)
		want   func([]Entry[int]) []Entry[int]
		ok     bool
		reason string
	}{
		{"set existing", 100,
			func(m imap) (imap, bool) { return m.Set(nil, "k50", -1), true },
			func(w []Entry[int]) []Entry[int] { w[50].Value = -1; return w }, true,
			"a replaced value keeps its position"},
		{"set new", 100,
			func(m imap) (imap, bool) { return m.Set(nil, "new", -1), true },
			func(w []Entry[int]) []Entry[int] { return append(w, Entry[int]{"new", -1}) }, true,
			"a new key goes at the end"},
		{"insert after", 1000,
			func(m imap) (imap, bool) { return m.InsertAfter(nil, "k10", "new", -1) },
			func(w []Entry[int]) []Entry[int] { return slices.Insert(w, 11, Entry[int]{"new", -1}) }, true,
			"a tool result goes after its call"},
		{"insert after the last", 1000,
			func(m imap) (imap, bool) { return m.InsertAfter(nil, "k999", "new", -1) },
			func(w []Entry[int]) []Entry[int] { return append(w, Entry[int]{"new", -1}) }, true,
			"after the last entry is the end"},
		{"insert after an absent key", 10,
			func(m imap) (imap, bool) { return m.InsertAfter(nil, "none", "new", -1) },
			func(w []Entry[int]) []Entry[int] { return w }, false,
			"nothing changes"},
		{"insert a held key", 1000,
			func(m imap) (imap, bool) { return m.Insert(nil, 0, "k3", -1) },
			func(w []Entry[int]) []Entry[int] { return w }, false,
			"keys stay distinct"},
		{"insert first", 1000,
			func(m imap) (imap, bool) { return m.Insert(nil, 0, "new", -1) },
			func(w []Entry[int]) []Entry[int] { return slices.Insert(w, 0, Entry[int]{"new", -1}) }, true,
			"every position after it moves"},
		{"delete", 1000,
			func(m imap) (imap, bool) { m, v, ok := m.Delete(nil, "k500"); return m, ok && v == 500 },
			func(w []Entry[int]) []Entry[int] { return slices.Delete(w, 500, 501) }, true,
			"the entries after it keep their order"},
		{"delete absent", 1000,
			func(m imap) (imap, bool) { m, _, ok := m.Delete(nil, "none"); return m, ok },
			func(w []Entry[int]) []Entry[int] { return w }, false,
			"nothing changes"},
		{"delete to flat", leafMax + 1,
			func(m imap) (imap, bool) { m, _, _ = m.DeleteAt(nil, 0); return m, true },
			func(w []Entry[int]) []Entry[int] { return w[1:] }, true,
			"the index goes when the entries fit in one leaf"},
		{"grow to a tree", leafMax,
			func(m imap) (imap, bool) { return m.Insert(nil, 3, "new", -1) },
			func(w []Entry[int]) []Entry[int] { return slices.Insert(w, 3, Entry[int]{"new", -1}) }, true,
			"the index comes when the leaf splits"},
		{"update", 1000,
			func(m imap) (imap, bool) { return m.Update(nil, "k1", func(v int) int { return v + 10 }) },
			func(w []Entry[int]) []Entry[int] { w[1].Value += 10; return w }, true,
			"f sees the old value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			orig := entries(tt.n)
			m, ok := MapOf[int, stat, entryStat](slices.Clone(orig)...)
			require.True(t, ok)
			got, ok := tt.edit(m)
			assert.Equal(t, tt.ok, ok, tt.reason)
			checkMap(t, got, tt.want(slices.Clone(orig)))
			checkMap(t, m, orig)
		})
	}
}

// mapModel applies the same random edits to a Map and to a slice of entries.
type mapModel struct {
	rng   *rand.Rand
	m     imap
	model []Entry[int]
	keys  int  // keys are drawn from this many names
	bias  int  // -3 to 3: more deletions or more insertions
	long  bool // use long keys that share a prefix
}

func (mm *mapModel) key() string {
	k := fmt.Sprintf("k%d", mm.rng.IntN(mm.keys))
	if mm.long {
		k = strings.Repeat("x", 40) + k
	}
	return k
}

func (mm *mapModel) pos(key string) int {
	return slices.IndexFunc(mm.model, func(e Entry[int]) bool { return e.Key == key })
}

func (mm *mapModel) step(t testing.TB, o *Owner) {
	n := len(mm.model)
	v := mm.rng.IntN(50)
	key := mm.key()
	at := mm.pos(key)
	switch op := mm.rng.IntN(12) - mm.bias; {
	case n == 0 || op < 2:
		mm.m = mm.m.Set(o, key, v)
		if at >= 0 {
			mm.model[at].Value = v
		} else {
			mm.model = append(mm.model, Entry[int]{key, v})
		}
	case op < 4:
		i := mm.rng.IntN(n + 1)
		var ok bool
		mm.m, ok = mm.m.Insert(o, i, key, v)
		require.Equal(t, at < 0, ok, "Insert(%q)", key)
		if ok {
			mm.model = slices.Insert(mm.model, i, Entry[int]{key, v})
		}
	case op < 5:
		after := mm.model[mm.rng.IntN(n)].Key
		var ok bool
		mm.m, ok = mm.m.InsertAfter(o, after, key, v)
		require.Equal(t, at < 0, ok, "InsertAfter(%q, %q)", after, key)
		if ok {
			mm.model = slices.Insert(mm.model, mm.pos(after)+1, Entry[int]{key, v})
		}
	case op < 7 || mm.bias < 0 && op < 7-2*mm.bias:
		var old int
		var ok bool
		mm.m, old, ok = mm.m.Delete(o, key)
		require.Equal(t, at >= 0, ok, "Delete(%q)", key)
		if ok {
			require.Equal(t, mm.model[at].Value, old)
			mm.model = slices.Delete(mm.model, at, at+1)
		}
	case op < 9:
		i := mm.rng.IntN(n)
		var k string
		var old int
		mm.m, k, old = mm.m.DeleteAt(o, i)
		require.Equal(t, mm.model[i], Entry[int]{k, old}, "DeleteAt(%d)", i)
		mm.model = slices.Delete(mm.model, i, i+1)
	case op < 10:
		i := mm.rng.IntN(n)
		mm.m = mm.m.UpdateAt(o, i, func(old int) int { return old + v })
		mm.model[i].Value += v
	default:
		var ok bool
		mm.m, ok = mm.m.Update(o, key, func(old int) int { return old - 1 })
		require.Equal(t, at >= 0, ok, "Update(%q)", key)
		if ok {
			mm.model[at].Value--
		}
	}
}

// TestMapModel applies random edits, persistent ones and batches, checking
// the Map and its index against a slice after each batch, and every Map
// published earlier at the end. The key pool makes most inserts of new keys
// and most deletions of held ones.
func TestMapModel(t *testing.T) {
	for _, tt := range []struct {
		name   string
		hash   func(string) uint64
		keys   int
		long   bool
		reason string
	}{
		{"maphash", hash, 3000, false, "the real hash"},
		{"colliding hash", func(s string) uint64 { return uint64(len(s) % 3) }, 500, false,
			"every key shares its hash with a third of the others: the index must still tell them apart"},
		{"long keys", hash, 3000, true, "keys with a long common prefix"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func(h func(string) uint64) { hash = h }(hash)
			hash = tt.hash
			for seed := range uint64(2 / min(2, modelRounds)) {
				rng := rand.New(rand.NewPCG(seed, 2))
				mm := &mapModel{rng: rng, keys: tt.keys, long: tt.long}
				type published struct {
					m     imap
					model []Entry[int]
				}
				var pubs []published
				for round := range 120 / modelRounds {
					var o *Owner
					if rng.IntN(2) == 0 {
						o = NewOwner()
					}
					ops := rng.IntN(150)
					mm.bias = 0
					switch round % 40 {
					case 5, 10:
						ops, mm.bias = 2000, 3
					case 20:
						ops, mm.bias = 4000, -3
					}
					for range ops {
						mm.step(t, o)
					}
					if o != nil {
						o.Seal()
					}
					if round%5 == 0 {
						checkMap(t, mm.m, mm.model)
					}
					if round%10 == 0 {
						pubs = append(pubs, published{mm.m, slices.Clone(mm.model)})
					}
				}
				for _, p := range pubs {
					checkMap(t, p.m, p.model)
				}
			}
		})
	}
}

// TestConcurrentReaders reads a sealed Map from two goroutines while a
// third edits it in batches and persistently; with -race, it fails if an
// edit writes to a node the readers can see.
func TestConcurrentReaders(t *testing.T) {
	o := NewOwner()
	var m imap
	for i := range 5000 {
		m = m.Set(o, fmt.Sprintf("k%d", i), i)
	}
	o.Seal()
	done := make(chan bool)
	for range 2 {
		go func() {
			defer func() { done <- true }()
			for range 3 {
				sum := 0
				for _, v := range m.All() {
					sum += v
				}
				assert.Equal(t, 5000*4999/2, sum)
				for i := 0; i < 5000; i += 97 {
					v, ok := m.Get(fmt.Sprintf("k%d", i))
					assert.True(t, ok)
					assert.Equal(t, i, v)
				}
			}
		}()
	}
	w := m
	for i := range 3000 {
		w = w.Set(o, fmt.Sprintf("k%d", i*7%5000), -1)
		w, _, _ = w.DeleteAt(nil, i%w.Len())
		w, _ = w.InsertAfter(o, fmt.Sprintf("k%d", (i*13)%5000), fmt.Sprintf("new%d", i), i)
	}
	<-done
	<-done
}

func TestMapPut(t *testing.T) {
	m, ok := MapOf[int, stat, entryStat](entries(100)...)
	require.True(t, ok)
	key, _ := m.At(40)
	n, old, had := m.Put(nil, key, -1)
	assert.True(t, had, "an existing key")
	assert.Equal(t, 40, old, "the value replaced")
	assert.Equal(t, 40, n.Index(key), "keeps its place")
	n, old, had = n.Put(nil, "new", 7)
	assert.False(t, had, "a new key")
	assert.Zero(t, old)
	assert.Equal(t, 100, n.Index("new"), "goes last")
	assert.Equal(t, 100, m.Len(), "the Map given is unchanged")
}

// TestMapOfCollisions checks MapOf when distinct keys share hashes.
func TestMapOfCollisions(t *testing.T) {
	defer func(h func(string) uint64) { hash = h }(hash)
	hash = func(key string) uint64 { return uint64(len(key)) }
	m, ok := MapOf[int, stat, entryStat](entries(100)...)
	require.True(t, ok, "colliding hashes are not duplicates")
	checkMap(t, m, entries(100))
	_, ok = MapOf[int, stat, entryStat](append(entries(100), Entry[int]{"k42", 0})...)
	assert.False(t, ok, "a duplicate among colliding hashes")
}

// TestMapEditHashesOnce checks that an edit of a tree Map by key hashes each
// key once: the index places or removes the key's pair where the edit's
// lookup found it.
func TestMapEditHashesOnce(t *testing.T) {
	m, ok := MapOf[int, stat, entryStat](entries(1000)...)
	require.True(t, ok)
	with := func(i int, key string) []Entry[int] {
		return slices.Insert(entries(1000), i, Entry[int]{key, -1})
	}
	for _, tt := range []struct {
		name   string
		edit   func(imap) imap
		hashes int
		want   []Entry[int]
		reason string
	}{
		{"delete", func(m imap) imap { m, _, _ = m.Delete(nil, "k500"); return m }, 1,
			slices.Delete(entries(1000), 500, 501), "the key's pair is where the lookup found it"},
		{"set a new key", func(m imap) imap { return m.Set(nil, "new", -1) }, 1,
			with(1000, "new"), "the new pair goes where the lookup stopped"},
		{"insert", func(m imap) imap { m, _ = m.Insert(nil, 10, "new", -1); return m }, 1,
			with(10, "new"), "as for Set"},
		{"insert after", func(m imap) imap { m, _ = m.InsertAfter(nil, "k10", "new", -1); return m }, 2,
			with(11, "new"), "the key, and the one it goes after"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func(h func(string) uint64) { hash = h }(hash)
			seeded, calls := hash, 0
			hash = func(key string) uint64 { calls++; return seeded(key) }
			got := tt.edit(m)
			hash = seeded
			assert.Equal(t, tt.hashes, calls, "%s", tt.reason)
			checkMap(t, got, tt.want)
			checkMap(t, m, entries(1000))
		})
	}
}
