// Tests of Concat.

package jsonv

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConcat(t *testing.T) {
	t.Parallel()
	var c Concat
	a := c.Append(NewString("He"), "l")
	b := c.Append(a, "lo")
	branch := c.Append(a, "p!") // a is no longer at the end of its buffer: copied
	d := c.Append(b, "\n\"")
	assert.Equal(t, "Hel", a.Text(), "older values never change")
	assert.Equal(t, "Hello", b.Text())
	assert.Equal(t, "Help!", branch.Text())
	assert.Equal(t, "Hello\n\"", d.Text())
	for _, n := range []*Node{a, b, branch, d} {
		assert.Equal(t, len(Marshal(n)), n.Size(), "size is kept up to date")
	}
	assert.Equal(t, "x", c.Append(nil, "x").Text())
}

// TestConcatOwnBuffers appends to one string with two Concats, as the
// Consumers of a thread and of its clone do, perhaps at once: only the
// Concat that made its buffer writes past the string in place, even when
// the other comes first; the other copies the text.
func TestConcatOwnBuffers(t *testing.T) {
	t.Parallel()
	var maker, other Concat
	s := maker.Append(NewString(""), "go:")
	o := other.Append(s, "2")
	m := maker.Append(s, "1")
	assert.Equal(t, []string{"go:", "go:1", "go:2"}, []string{s.Text(), m.Text(), o.Text()})
	data := func(n *Node) *byte { return unsafe.StringData(n.Text()) }
	assert.NotSame(t, data(s), data(o), "the other Concat copies the text")
	assert.Same(t, data(s), data(m), "the maker appends in place")
	assert.Same(t, data(o), data(other.Append(o, "3")), "then each appends in place to its own")
}

// BenchmarkConcat streams a 1 MB text in 4-byte pieces: the cost per piece
// must not grow with the text.
func BenchmarkConcat(b *testing.B) {
	piece := strings.Repeat("x", 4)
	for b.Loop() {
		var c Concat
		s := NewString("")
		for range 1 << 18 {
			s = c.Append(s, piece)
		}
	}
}

// TestConcatJoinsSurrogates checks that a UTF-16 pair streamed in two
// pieces becomes one code point, equal to what a parser makes of the pair.
func TestConcatJoinsSurrogates(t *testing.T) {
	t.Parallel()
	hi, err := Parse([]byte(`"a\ud83d"`), 0)
	assert.NoError(t, err)
	lo, err := Parse([]byte(`"\ude00b"`), 0)
	assert.NoError(t, err)
	var c Concat
	got := c.Append(hi, lo.Text())
	want, err := Parse([]byte(`"a\ud83d\ude00b"`), 0)
	assert.NoError(t, err)
	assert.True(t, Equal(want, got), "%q vs %q", want.Text(), got.Text())
	assert.Equal(t, "a😀b", got.Text())
	assert.Equal(t, len(Marshal(got)), got.Size())
	lone := c.Append(hi, "x")
	assert.Equal(t, `"a\ud83dx"`, string(Marshal(lone)), "a lone surrogate stays one")
}

// TestConcatSplitPairs checks pairs split between pieces, as a producer
// streaming UTF-16 may split them: the high half waits beside the buffer,
// joins the low half of the next piece, and older values keep their text.
func TestConcatSplitPairs(t *testing.T) {
	t.Parallel()
	piece := func(s string) string { // a piece as the parser decodes it
		n, err := Parse([]byte(s), 0)
		require.NoError(t, err)
		return n.Text()
	}
	var c Concat
	a := c.Append(NewString("x"), piece(`"a\ud83d"`))
	assert.Equal(t, `"xa\ud83d"`, string(Marshal(a)), "a lone high surrogate is kept")
	b := c.Append(a, piece(`"\ude00b"`))
	assert.Equal(t, "xa😀b", b.Text(), "the halves join")
	branch := c.Append(a, "y")
	assert.Equal(t, `"xa\ud83dy"`, string(Marshal(branch)), "a piece without the low half leaves the high one alone")
	lone := c.Append(b, piece(`"\udfff"`))
	assert.Equal(t, `"xa😀b\udfff"`, string(Marshal(lone)), "a low half with nothing to join stays lone")
	twice := c.Append(c.Append(b, piece(`"\ud83d"`)), piece(`"\ud83d"`))
	assert.Equal(t, `"xa😀b\ud83d\ud83d"`, string(Marshal(twice)), "two high halves in a row")
	for _, n := range []*Node{a, b, branch, lone, twice} {
		assert.Equal(t, len(Marshal(n)), n.Size(), "the size of %s", Marshal(n))
		re, err := Parse(Marshal(n), 0)
		require.NoError(t, err)
		assert.True(t, Equal(re, n), "equal to what a parser makes of its text: %s", Marshal(n))
	}
	assert.Equal(t, `"xa\ud83d"`, string(Marshal(a)), "older values never change")
}

// TestTextHead checks that TextHead leaves out only the high half that a
// string made by Concat holds apart, and that the heads of a growing string
// each begin with the one before, so that what a piece added is the rest.
func TestTextHead(t *testing.T) {
	t.Parallel()
	hi, lo := "\xed\xa0\xbd", "\xed\xb8\x80" // U+D83D and U+DE00 in WTF-8
	head := func(n *Node) []any {
		h, held := n.TextHead()
		return []any{h, held}
	}
	var c Concat
	a := c.Append(NewString("x"), "a"+hi)
	assert.Equal(t, []any{"xa", true}, head(a), "the held high half is left out")
	assert.Equal(t, "xa"+hi, a.Text(), "Text has it")
	b := c.Append(a, lo+"b")
	assert.Equal(t, []any{"xa😀b", false}, head(b), "the joined pair follows the head before")
	lone := c.Append(a, "y")
	assert.Equal(t, []any{"xa" + hi + "y", false}, head(lone), "a high half that did not pair is text")
	two := c.Append(a, hi)
	assert.Equal(t, []any{"xa" + hi, true}, head(two), "the first of two high halves is text, the second held")
	parsed, err := Parse([]byte(`"q\ud83d"`), 0)
	require.NoError(t, err)
	assert.Equal(t, []any{"q" + hi, false}, head(parsed), "a parsed string holds nothing apart")
	assert.Equal(t, []any{"", false}, head(NewNumber("1")), "not a string")
}

// TestConcatSplitPairCostsThePiece checks that joining a split pair at the
// end of a long text copies nothing of the text.
func TestConcatSplitPairCostsThePiece(t *testing.T) {
	var c Concat
	s := c.Append(NewString("x"), strings.Repeat("y", 1<<20))
	hi, lo := "\xed\xa0\xbd", "\xed\xb8\x80" // U+D83D and U+DE00 in WTF-8
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		s = c.Append(c.Append(s, "z"+hi), lo+"w")
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "200 pieces on a 1 MB text allocate the pieces, not the text")
	assert.Equal(t, strings.Repeat("z😀w", 100), s.Text()[1<<20+1:])
}

// TestConcatLetsGo checks that a Concat keeps no buffer that no value uses.
func TestConcatLetsGo(t *testing.T) {
	var c Concat
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := heap()
	for range 64 {
		s := NewString("")
		for range 256 {
			s = c.Append(s, strings.Repeat("x", 4<<10)) // a 1 MB message, dropped
		}
	}
	assert.Less(t, heap(), base+(16<<20), "64 dropped 1 MB messages are freed")
}
