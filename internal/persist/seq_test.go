// Tests of Seq against a slice model.

package persist

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func seqRange(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestSeqOf(t *testing.T) {
	for _, tt := range []struct {
		name   string
		n      int
		reason string
	}{
		{"empty", 0, "the zero Seq and an empty one are the same"},
		{"one", 1, "a single element is a flat leaf"},
		{"flat", leafMax, "the largest flat Seq"},
		{"two leaves", leafMax + 1, "the smallest tree: two leaves of at least leafMin"},
		{"one branch", leafMax * branchMax, "a full branch of full leaves"},
		{"two levels", leafMax*branchMax + 1, "one more element adds a level"},
		{"large", 100_000, "several levels"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := seqRange(tt.n)
			checkSeq(t, SeqOf[int, stat, statOf](slices.Clone(want)...), want)
		})
	}
}

func TestSeqEdits(t *testing.T) {
	for _, tt := range []struct {
		name   string
		n      int
		edit   func(ints) ints
		want   func([]int) []int
		reason string
	}{
		{"append to empty", 0,
			func(s ints) ints { return s.Append(nil, 7) },
			func([]int) []int { return []int{7} },
			"the zero Seq takes elements"},
		{"insert first in a full leaf", leafMax,
			func(s ints) ints { return s.Insert(nil, 0, -1) },
			func(w []int) []int { return slices.Insert(w, 0, -1) },
			"a full flat leaf splits into a tree"},
		{"append to a full leaf", leafMax,
			func(s ints) ints { return s.Append(nil, -1) },
			func(w []int) []int { return append(w, -1) },
			"an append splits unevenly, leaving the left leaf fuller"},
		{"delete down to flat", leafMax + 1,
			func(s ints) ints { s, _ = s.Delete(nil, 3); return s },
			func(w []int) []int { return slices.Delete(w, 3, 4) },
			"two leaves that fit in one merge, and the root shrinks to a leaf"},
		{"set the maximum lower", 1000,
			func(s ints) ints { return s.Set(nil, 999, 0) },
			func(w []int) []int { w[999] = 0; return w },
			"Sub cannot take out the only maximum, so the summary is added up again"},
		{"delete in the middle", 100_000,
			func(s ints) ints { s, _ = s.Delete(nil, 50_000); return s },
			func(w []int) []int { return slices.Delete(w, 50_000, 50_001) },
			"a deep tree"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			orig := seqRange(tt.n)
			s := SeqOf[int, stat, statOf](slices.Clone(orig)...)
			got := tt.edit(s)
			checkSeq(t, got, tt.want(slices.Clone(orig)))
			checkSeq(t, s, orig) // persistent: the original is unchanged
		})
	}
}

func TestSeqOutOfRange(t *testing.T) {
	s := SeqOf[int, stat, statOf](1, 2, 3)
	for _, tt := range []struct {
		name string
		f    func()
	}{
		{"At(-1)", func() { s.At(-1) }},
		{"At(Len)", func() { s.At(3) }},
		{"Set(Len)", func() { s.Set(nil, 3, 0) }},
		{"Insert(Len+1)", func() { s.Insert(nil, 4, 0) }},
		{"Delete on empty", func() { var e ints; e.Delete(nil, 0) }},
	} {
		assert.Panics(t, tt.f, tt.name)
	}
}

func TestSeqAllStops(t *testing.T) {
	s := SeqOf[int, stat, statOf](seqRange(1000)...)
	var got []int
	for i, v := range s.All() {
		if i == 500 {
			break
		}
		got = append(got, v)
	}
	assert.Equal(t, seqRange(500), got)
}

// TestSeqModel applies random edits, persistent ones and batches, and
// checks the Seq against a slice after each batch, and every Seq published
// earlier against its own copy at the end: a batch never changes what was
// published before it.
func TestSeqModel(t *testing.T) {
	for seed := range uint64(4 / modelRounds) {
		rng := rand.New(rand.NewPCG(seed, 1))
		m := &seqModel{rng: rng}
		type published struct {
			s     ints
			model []int
		}
		var pubs []published
		for round := range 300 / modelRounds {
			var o *Owner
			if rng.IntN(2) == 0 {
				o = NewOwner()
			}
			ops := rng.IntN(200)
			m.bias = 0
			switch round % 50 {
			case 10, 20:
				ops, m.bias = 5000, 3 // grow by whole levels
			case 30:
				ops, m.bias = 9000, -3 // and shrink back
			}
			var log []string
			for range ops {
				log = append(log, m.step(t, o))
			}
			if o != nil {
				o.Seal()
			}
			if round%10 == 0 || len(m.model) < 200 {
				checkSeq(t, m.s, m.model)
			}
			if round%20 == 0 {
				pubs = append(pubs, published{m.s, slices.Clone(m.model)})
			}
			require.Equal(t, len(m.model), m.s.Len(), "after %v", log)
		}
		for _, p := range pubs {
			checkSeq(t, p.s, p.model)
		}
	}
}

// TestSeqSearch checks Search against a linear scan of the running totals,
// on flat and deep Seqs, and on one whose deletions left leaves of every
// size.
func TestSeqSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, leafMax, leafMax + 1, 5000} {
		model := make([]int, n)
		for i := range model {
			model[i] = rng.IntN(4) // zeros make runs of equal totals
		}
		s := SeqOf[int, stat, statOf](slices.Clone(model)...)
		for k := 0; k < n/3; k++ {
			i := rng.IntN(len(model))
			s, _ = s.Delete(nil, i)
			model = slices.Delete(model, i, i+1)
		}
		total := 0
		for _, v := range model {
			total += v
		}
		for _, x := range []int{-1, 0, 1, total / 2, total - 1, total, total + 1} {
			want, run := len(model), 0
			for i, v := range model {
				if run += v; run > x {
					want = i
					break
				}
			}
			got := s.Search(func(st stat) bool { return st.total > x })
			assert.Equal(t, want, got, "n=%d: first position where the running total passes %d", n, x)
		}
		for _, i := range []int{0, len(model) / 2, len(model) - 1} {
			if i >= 0 {
				assert.Equal(t, i, s.Search(func(st stat) bool { return st.count > i }), "n=%d: the element at %d", n, i)
			}
		}
	}
}

// TestSeqBatchCopiesOnce checks that a batch changes in place the nodes it
// made: a second edit of the same leaf allocates nothing.
func TestSeqBatchCopiesOnce(t *testing.T) {
	s := SeqOf[int, stat, statOf](seqRange(100_000)...)
	o := NewOwner()
	s = s.Set(o, 500, 1)
	allocs := testing.AllocsPerRun(100, func() { s = s.Set(o, 501, 2) })
	assert.Zero(t, allocs, "an owned path is edited in place")
	o.Seal()
	allocs = testing.AllocsPerRun(1, func() { _ = s.Set(o, 501, 3) })
	assert.NotZero(t, allocs, "after Seal the path is copied again")
}

func TestSeqChunks(t *testing.T) {
	s := SeqOf[int, stat, statOf](seqRange(1000)...)
	var got []int
	runs := 0
	for run := range s.Chunks() {
		got = append(got, run...)
		runs++
	}
	assert.Equal(t, seqRange(1000), got, "every element once, in order")
	assert.Greater(t, runs, 1, "one run per leaf")
	u := s.Set(nil, 999, -1)
	var shared int
	for a, b := range zipChunks(s, u) {
		if &a[0] == &b[0] && len(a) == len(b) {
			shared++
		}
	}
	assert.Equal(t, runs-1, shared, "an edit leaves every other leaf shared")
	var empty ints
	for range empty.Chunks() {
		t.Fatal("an empty Seq yields no run")
	}
}

// zipChunks pairs the runs of two Seqs of the same shape.
func zipChunks(a, b ints) func(func([]int, []int) bool) {
	return func(yield func([]int, []int) bool) {
		var bs [][]int
		for run := range b.Chunks() {
			bs = append(bs, run)
		}
		k := 0
		for run := range a.Chunks() {
			if !yield(run, bs[k]) {
				return
			}
			k++
		}
	}
}

func TestOwnerCopied(t *testing.T) {
	s := SeqOf[int, stat, statOf](seqRange(10_000)...)
	o := NewOwner()
	s = s.Set(o, 5000, -1)
	first := o.Copied()
	assert.Positive(t, first, "the first edit copies its path")
	s = s.Set(o, 5001, -2)
	assert.Equal(t, first, o.Copied(), "a second edit in the batch copies nothing")
	o.Seal()
	s.Set(o, 5002, -3)
	assert.Equal(t, 2*first, o.Copied(), "after Seal the path is copied again")
	var m imap
	mo := NewOwner()
	for i, e := range entries(500) {
		m = m.Set(mo, e.Key, i)
	}
	assert.Positive(t, mo.Copied(), "the index's nodes count too")
}

func TestBuilder(t *testing.T) {
	for _, n := range []int{0, 1, fill - 1, fill, fill + 1, fill + leafMin - 1, fill + leafMin, leafMax, 2*fill + 5, 100_000} {
		for _, batch := range []int{1, 7, fill, 1000} {
			want := seqRange(n)
			var b Builder[int, stat, statOf]
			for i := 0; i < n; i += batch {
				b.Add(want[i:min(i+batch, n)]...)
			}
			checkSeq(t, b.Seq(), want)
		}
	}
}

func TestSeqFlat(t *testing.T) {
	items, ok := SeqOf[int, stat, statOf](seqRange(leafMax)...).Flat()
	assert.True(t, ok)
	assert.Equal(t, seqRange(leafMax), items, "a Seq of FlatMax elements is one leaf")
	_, ok = SeqOf[int, stat, statOf](seqRange(leafMax + 1)...).Flat()
	assert.False(t, ok, "one more is a tree")
}

// TestSeqSeek checks Seek on sorted Seqs, flat and deep, against a linear
// scan, at keys inside, between and outside the elements.
func TestSeqSeek(t *testing.T) {
	for _, n := range []int{0, 1, leafMax, leafMax + 1, 5000} {
		model := make([]int, n)
		for i := range model {
			model[i] = 2 * (i / 3) // runs of equal keys
		}
		s := SeqOf[int, stat, statOf](model...)
		for _, k := range []int{-1, 0, 1, 2, n / 2, n/2 + 1, 2*n - 1, 2 * n} {
			want := len(model)
			for i, v := range model {
				if v >= k {
					want = i
					break
				}
			}
			got, v, ok := s.Seek(func(st stat) bool { return st.max >= k })
			assert.Equal(t, want, got, "n=%d: first element of at least %d", n, k)
			assert.Equal(t, want < n, ok, "n=%d: found", n)
			if ok {
				assert.Equal(t, model[want], v, "n=%d: the element", n)
			}
		}
	}
}

// TestSetIn checks that SetIn allocates a header with the copy of a
// flat Seq, and only then: not for a tree, nor for a leaf the Owner owns.
func TestSetIn(t *testing.T) {
	type header struct{ _ int } // of some size, as a container's header is
	for _, tt := range []struct {
		name       string
		n          int
		owned      bool
		wantHeader bool
		reason     string
	}{
		{"flat", 5, false, true, "the copy of the leaf comes with a header"},
		{"flat owned", 5, true, false, "a leaf the Owner owns changes in place"},
		{"tree", 1000, false, false, "a tree copies a path, not one leaf"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOwner()
			s := SeqOf[int, stat, statOf](seqRange(tt.n)...)
			if tt.owned {
				s = s.Set(o, 0, 0)
			}
			var before []int
			for _, v := range s.All() {
				before = append(before, v)
			}
			var m statOf
			got := s
			h := SetIn[header](&got, o, 3, 6, m.Of(3), m.Of(6))
			assert.Equal(t, tt.wantHeader, h != nil, tt.reason)
			want := seqRange(tt.n)
			want[3] = 6
			checkSeq(t, got, want)
			if !tt.owned {
				checkSeq(t, s, before) // persistent: the old Seq is as it was
			}
		})
	}
}
