// Tests of the persistent edits: each returns the edited copy and leaves
// its argument as it was.

package jsonv

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPersistentEdits(t *testing.T) {
	t.Parallel()
	parse := func(s string) *Node {
		n, err := Parse([]byte(s), 0)
		require.NoError(t, err)
		return n
	}
	tests := []struct {
		name, in string
		edit     func(*Node) *Node
		want     string
	}{
		{"set a member", `{"a":1,"b":2}`, func(n *Node) *Node { return WithMember(n, "a", NewNumber("3")) }, `{"a":3,"b":2}`},
		{"add a member at the end", `{"a":1}`, func(n *Node) *Node { return WithMember(n, "z", NewBool(true)) }, `{"a":1,"z":true}`},
		{"remove a member", `{"a":1,"b":2,"c":3}`, func(n *Node) *Node { return WithoutMember(n, "b") }, `{"a":1,"c":3}`},
		{"remove no member", `{"a":1}`, func(n *Node) *Node { return WithoutMember(n, "x") }, `{"a":1}`},
		{"set an element", `[1,[2],3]`, func(n *Node) *Node { return WithElem(n, 1, NewNull()) }, `[1,null,3]`},
		{"append", `[1]`, func(n *Node) *Node { return WithAppended(n, NewString("x")) }, `[1,"x"]`},
		{"merge", `{"a":1,"b":2}`, func(n *Node) *Node { return Merged(n, parse(`{"b":9,"c":3,"\n":4}`)) }, `{"a":1,"b":9,"c":3,"\n":4}`},
		{"a wide object", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}`,
			func(n *Node) *Node { return WithoutMember(WithMember(n, "k", NewNull()), "a") },
			`{"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := parse(tt.in)
			got := tt.edit(n)
			assert.Equal(t, tt.want, string(Marshal(got)))
			assert.Equal(t, len(tt.want), got.Size(), "the size is kept up to date")
			assert.Equal(t, tt.in, string(Marshal(n)), "the argument is unchanged")
			again := tt.edit(n)
			assert.Equal(t, tt.want, string(Marshal(again)), "editing the argument again starts from it")
		})
	}
}

func TestNewObjectOf(t *testing.T) {
	t.Parallel()
	n := NewObjectOf([]string{"a", "b", "c"}, NewNumber("1"), nil, NewString("x"))
	assert.Equal(t, `{"a":1,"c":"x"}`, string(Marshal(n)), "nil values are left out")
}

func TestAll(t *testing.T) {
	t.Parallel()
	n, err := Parse([]byte(`[1,2,3]`), 0)
	require.NoError(t, err)
	var got []string
	for i, e := range n.All() {
		got = append(got, string(Marshal(e)))
		if i == 1 {
			break
		}
	}
	assert.Equal(t, []string{"1", "2"}, got, "in order, and it stops when told")
}

// TestEditBatch checks that a batch copies a node once, changes in place
// only what it made, and leaves the values it was given as they were.
func TestEditBatch(t *testing.T) {
	t.Parallel()
	elems := make([]string, 1000)
	for i := range elems {
		elems[i] = fmt.Sprint(i)
	}
	text := `{"a":[` + strings.Join(elems, ",") + `],"b\"\n":1}`
	doc, err := Parse([]byte(text), 0)
	require.NoError(t, err)
	e := NewEdit()
	set := func(i int, v string) {
		doc, err = e.Update(doc, []string{"a"}, func(a *Node) (*Node, error) { return e.SetAt(a, i, NewNumber(v)), nil })
		require.NoError(t, err)
	}
	set(500, "-1")
	first := e.Work()
	set(501, "-2")
	assert.Less(t, e.Work()-first, first/2, "the second edit changes in place what the first copied")
	sealed := doc
	e.Seal()
	set(502, "-3")
	assert.Equal(t, "502", sealed.Get("a").Elem(502).Text(), "after Seal, what the batch made is left alone")
	doc, _ = e.SetMember(doc, "c/~", NewString("\u0001"))
	doc, _ = e.RemoveMember(doc, `b"`+"\n")
	assert.Equal(t, len(Marshal(doc)), doc.Size(), "sizes follow escaped names in and out")
	_, err = e.Update(doc, []string{"a", "x"}, func(n *Node) (*Node, error) { return n, nil })
	assert.EqualError(t, err, `"x" is not an array index (at "/a/x")`)
	orig, err := Parse([]byte(text), 0)
	require.NoError(t, err)
	assert.Equal(t, text, string(Marshal(orig)))
}
