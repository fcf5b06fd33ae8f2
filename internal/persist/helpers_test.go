// Test helpers: a measure that counts, sums and takes the maximum, and checks of a tree's
// shape.

package persist

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// stat is the test summary: how many elements, their total, and their
// maximum with how many elements reach it. The maximum makes Sub fail
// sometimes, as the depth of JSON values does.
type stat struct {
	count, total int
	max, nmax    int
}

type statOf struct{}

func (statOf) Of(v int) stat { return stat{count: 1, total: v, max: v, nmax: 1} }

func (statOf) Add(a, b stat) stat {
	s := stat{count: a.count + b.count, total: a.total + b.total, max: a.max, nmax: a.nmax}
	switch {
	case a.nmax == 0 || b.max > a.max:
		s.max, s.nmax = b.max, b.nmax
	case b.max == a.max:
		s.nmax += b.nmax
	}
	return s
}

func (statOf) Sub(a, b stat) (stat, bool) {
	s := stat{count: a.count - b.count, total: a.total - b.total, max: a.max, nmax: a.nmax}
	if b.nmax > 0 && b.max == a.max {
		if s.nmax -= b.nmax; s.nmax == 0 && s.count > 0 {
			return stat{}, false
		}
	}
	if s.count == 0 {
		s.max, s.nmax = 0, 0
	}
	return s, true
}

type ints = Seq[int, stat, statOf]

// checkSeq checks s against the model want and every invariant of its tree:
// element order, lengths, summaries, node fill, equal leaf depth, and
// distinct identities.
func checkSeq[T any, S comparable, M Measure[T, S]](t testing.TB, s Seq[T, S, M], want []T) {
	t.Helper()
	require.Equal(t, len(want), s.Len(), "Len")
	var got []T
	for i, v := range s.All() {
		require.Equal(t, len(got), i, "All numbers the elements in order")
		got = append(got, v)
	}
	if len(want) == 0 {
		require.Empty(t, got)
	} else {
		require.Equal(t, want, got, "elements")
	}
	for _, i := range []int{0, len(want) / 3, len(want) / 2, len(want) - 1} {
		if i >= 0 && i < len(want) {
			require.Equal(t, want[i], s.At(i), "At(%d)", i)
		}
	}
	var m M
	var e editor[T, S, M]
	require.Equal(t, e.leafSum(want), s.Summary(), "Summary")
	n, sum := s.Stat()
	require.Equal(t, len(want), n, "Stat's Len")
	require.Equal(t, s.Summary(), sum, "Stat's Summary")
	for _, i := range []int{0, 1, len(want) / 3, len(want) - 1, len(want)} {
		if i >= 0 && i <= len(want) {
			require.Equal(t, e.leafSum(want[:i]), s.Prefix(i), "Prefix(%d)", i)
		}
	}
	seen := map[uint64]bool{}
	leafDepth := -1
	var walk func(c *node[T, S, M], depth int, root bool)
	walk = func(c *node[T, S, M], depth int, root bool) {
		if c.br == nil {
			require.LessOrEqual(t, len(c.items()), leafMax, "leaf size")
			if !root {
				require.GreaterOrEqual(t, len(c.items()), leafMin, "leaf size")
				require.NotZero(t, c.lf.id, "a leaf in a tree has an identity")
				require.False(t, seen[c.lf.id], "identity %d appears twice", c.lf.id)
				seen[c.lf.id] = true
			}
			if leafDepth < 0 {
				leafDepth = depth
			}
			require.Equal(t, leafDepth, depth, "every leaf is at the same depth")
			require.Equal(t, e.leafSum(c.items()), c.sum, "leaf summary")
			return
		}
		b := c.br
		require.LessOrEqual(t, len(b.kids), branchMax, "branch size")
		if root {
			require.GreaterOrEqual(t, len(b.kids), 2, "a root branch has two children")
		} else {
			require.GreaterOrEqual(t, len(b.kids), branchMin, "branch size")
		}
		require.NotZero(t, b.id)
		require.False(t, seen[b.id], "identity %d appears twice", b.id)
		seen[b.id] = true
		n := 0
		var sum S
		for k := range b.kids {
			walk(&b.kids[k], depth+1, false)
			n += b.kids[k].len()
			sum = m.Add(sum, b.kids[k].sum)
		}
		require.Equal(t, n, b.n, "branch length")
		require.Equal(t, sum, c.sum, "branch summary")
	}
	walk(&s.root, 0, true)
}

// seqModel applies the same random edits to a Seq and to a slice.
type seqModel struct {
	rng   *rand.Rand
	s     ints
	model []int
	next  int
	bias  int // -3 to 3: more deletions or more insertions
}

// step makes one random edit with owner o (nil for a persistent one).
func (m *seqModel) step(t testing.TB, o *Owner) string {
	n := len(m.model)
	m.next++
	v := m.rng.IntN(50)
	switch op := m.rng.IntN(10) - m.bias; {
	case n == 0 || op < 3:
		i := m.rng.IntN(n + 1)
		if m.rng.IntN(3) == 0 {
			i = n
		}
		m.s = m.s.Insert(o, i, v)
		m.model = slices.Insert(m.model, i, v)
		return fmt.Sprintf("insert %d at %d", v, i)
	case op < 6 || m.bias < 0 && op < 6-2*m.bias:
		i := m.rng.IntN(n)
		var old int
		m.s, old = m.s.Delete(o, i)
		require.Equal(t, m.model[i], old, "Delete returns the element")
		m.model = slices.Delete(m.model, i, i+1)
		return fmt.Sprintf("delete at %d", i)
	case op < 8:
		i := m.rng.IntN(n)
		m.s = m.s.Set(o, i, v)
		m.model[i] = v
		return fmt.Sprintf("set %d to %d", i, v)
	default:
		i := m.rng.IntN(n)
		m.s = m.s.Update(o, i, func(old int) int {
			require.Equal(t, m.model[i], old, "Update passes the element")
			return old + 1
		})
		m.model[i]++
		return fmt.Sprintf("update %d", i)
	}
}
