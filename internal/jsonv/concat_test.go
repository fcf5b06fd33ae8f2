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
