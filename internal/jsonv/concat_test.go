// Tests of Concat.

package jsonv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
