// Tests of packed containers: they read, write and edit as the same values
// held as trees do.

package jsonv

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// packedDocs are texts whose nested small containers Parse packs.
var packedDocs = []string{
	`{"a":{"b":[1,2,{"c":"d"}],"e":"x\"y\\z\u0001","é":{"":[]}},"f":[[0],[1,[2,[3]]],{}],"g":{"\u00e9":1,"h\"i":[true,false,null]}}`,
	`[{"id":"t1","name":"Task 1","done":false,"tags":["a","b"],"weight":1.5},{"id":"t2","deep":{"x":{"y":{"z":[-0,1e2,"\ud800"]}}}}]`,
	`{"list":[` + func() string {
		s := ""
		for i := range 40 {
			if i > 0 {
				s += ","
			}
			s += `{"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i*7) + `}`
		}
		return s
	}() + `]}`,
}

// walkBoth checks that p (packed where Parse packs) reads as t (a tree)
// does, container by container, and counts the packed containers met.
func walkBoth(t *testing.T, p, tr *Node, path string, packed *int) {
	t.Helper()
	if p.isPacked() {
		*packed++
	}
	require.Equal(t, tr.Kind(), p.Kind(), path)
	assert.Equal(t, tr.Size(), p.Size(), path)
	assert.Equal(t, tr.Depth(), p.Depth(), path)
	assert.Equal(t, tr.Len(), p.Len(), path)
	assert.Equal(t, string(Marshal(tr)), string(Marshal(p)), path)
	assert.True(t, Equal(p, tr) && Equal(tr, p), path)
	switch tr.Kind() {
	case Array:
		for i, v := range tr.All() {
			walkBoth(t, p.Elem(i), v, path+"/"+strconv.Itoa(i), packed)
		}
		n := 0
		for i, v := range p.All() {
			assert.Equal(t, string(Marshal(tr.Elem(i))), string(Marshal(v)), path)
			n++
		}
		assert.Equal(t, tr.Len(), n, path)
	case Object:
		for i := range tr.Len() {
			name, v := tr.Member(i)
			pname, pv := p.Member(i)
			assert.Equal(t, name, pname, path)
			walkBoth(t, pv, v, path+"/"+EscapeToken(name), packed)
			assert.Equal(t, string(Marshal(v)), string(Marshal(p.Get(name))), path)
		}
		assert.Nil(t, p.Get("no such member"), path)
		n := 0
		for name, v := range p.Members() {
			assert.Equal(t, string(Marshal(tr.Get(name))), string(Marshal(v)), path)
			n++
		}
		assert.Equal(t, tr.Len(), n, path)
	}
}

func TestPackedReadsAsTree(t *testing.T) {
	t.Parallel()
	for i, doc := range packedDocs {
		p, err := Parse([]byte(doc), 0)
		require.NoError(t, err)
		tr, err := ParseFrom([]byte(doc), 0, 0)
		require.NoError(t, err)
		packed := 0
		walkBoth(t, p, tr, fmt.Sprintf("doc %d", i), &packed)
		assert.Positive(t, packed, "doc %d has packed containers", i)
		assert.Equal(t, string(Marshal(tr)), string(Marshal(p)), "doc %d", i)
	}
}

func TestParsePacks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		packed   bool
		reason   string
	}{
		{"compact", `[{"a":1}]`, true, "compact text as Append writes it is kept"},
		{"white space", `[{"a": 1}]`, false, "white space would change the text"},
		{"escaped slash", `[{"a":"\/"}]`, false, `Append writes "/"`},
		{"upper hex", `[{"a":"\u001F"}]`, false, `Append writes \u001f`},
		{"lone surrogate", `[{"a":"\ud800"}]`, true, `Append writes \ud800`},
		{"escaped name", `[{"\u0041":1}]`, false, `Append writes "A"`},
		{"large", `[{"a":"` + string(make([]byte, packMax)) + `"}]`, false, "longer than packMax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n, err := Parse([]byte(tt.in), 0)
			if tt.name == "large" {
				require.Error(t, err, "control characters")
				n, err = Parse([]byte(`[{"a":"`+fmt.Sprintf("%0*d", packMax, 0)+`"}]`), 0)
			}
			require.NoError(t, err)
			assert.False(t, n.isPacked(), "the value itself is never packed")
			assert.Equal(t, tt.packed, n.Elem(0).isPacked(), tt.reason)
		})
	}
}

func TestParseRejectsDuplicatesInSmallObjects(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(`[{"a":1,"b":2,"a":3}]`), 0)
	assert.ErrorIs(t, err, ErrDuplicateName)
}

// TestPackedEdits makes the same random edits of a packed and a tree
// value and checks that they stay the same JSON.
func TestPackedEdits(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(18, 4))
	values := []string{`0`, `"s"`, `{"n":[1,2]}`, `[]`, `{}`, `"long ` + fmt.Sprintf("%0200d", 0) + `"`}
	for _, doc := range packedDocs {
		p, err := Parse([]byte(doc), 0)
		require.NoError(t, err)
		tr, err := ParseFrom([]byte(doc), 0, 0)
		require.NoError(t, err)
		for step := range 400 {
			// A random path to a container, taken in both.
			var tokens []string
			for c := tr; c.Len() > 0 && rng.IntN(3) > 0; {
				i := rng.IntN(c.Len())
				var next *Node
				if c.Kind() == Array {
					tokens, next = append(tokens, strconv.Itoa(i)), c.Elem(i)
				} else {
					var name string
					name, next = c.Member(i)
					tokens = append(tokens, name)
				}
				if next.Kind() != Array && next.Kind() != Object {
					break
				}
				c = next
			}
			v, err := Parse([]byte(values[rng.IntN(len(values))]), 0)
			require.NoError(t, err)
			k := rng.IntN(4)
			name := []string{"a", "new", "é", "x\"y"}[rng.IntN(4)]
			edit := func(c *Node) (*Node, error) {
				switch {
				case c.Kind() == Object && k < 2:
					c, _ = (*Edit)(nil).SetMember(c, name, v)
				case c.Kind() == Object:
					c, _ = (*Edit)(nil).RemoveMember(c, name)
				case c.Kind() == Array && k < 2:
					c = (*Edit)(nil).InsertElem(c, rng.IntN(c.Len()+1), v)
				case c.Kind() == Array && c.Len() > 0 && k == 2:
					c, _ = (*Edit)(nil).RemoveElem(c, rng.IntN(c.Len()))
				case c.Kind() == Array && c.Len() > 0:
					c = (*Edit)(nil).SetAt(c, rng.IntN(c.Len()), v)
				}
				return c, nil
			}
			seed := rng.Uint64()
			rng = rand.New(rand.NewPCG(seed, 1))
			np, err := NewEdit().Update(p, tokens, edit)
			require.NoError(t, err)
			rng = rand.New(rand.NewPCG(seed, 1))
			nt, err := NewEdit().Update(tr, tokens, edit)
			require.NoError(t, err)
			require.Equal(t, string(Marshal(nt)), string(Marshal(np)), "step %d at %q", step, FormatPointer(tokens))
			require.Equal(t, nt.Size(), np.Size(), "step %d", step)
			require.Equal(t, nt.Depth(), np.Depth(), "step %d", step)
			p, tr = np, nt
		}
		packed := 0
		walkBoth(t, p, tr, "edited", &packed)
	}
}

func TestPackedUpdateFailsAsTree(t *testing.T) {
	t.Parallel()
	doc := `{"a":{"b":[1,{"c":2}]}}`
	p, err := Parse([]byte(doc), 0)
	require.NoError(t, err)
	tr, err := ParseFrom([]byte(doc), 0, 0)
	require.NoError(t, err)
	require.True(t, p.Get("a").isPacked())
	keep := func(c *Node) (*Node, error) { return c, nil }
	for _, path := range []string{"/a/x", "/a/b/2", "/a/b/-", "/a/b/01", "/a/b/0/x", "/a/b/1/c/d", "/a/b/99999999999999999999"} {
		tokens, err := ParsePointer(path)
		require.NoError(t, err)
		_, errP := NewEdit().Update(p, tokens, keep)
		_, errT := NewEdit().Update(tr, tokens, keep)
		require.Error(t, errT, path)
		assert.Equal(t, errT.Error(), errP.Error(), path)
	}
}

func TestSame(t *testing.T) {
	t.Parallel()
	p, err := Parse([]byte(`{"a":{"x":[1,2]},"b":{"x":[1,2]},"c":{"x":[1,2.0]},"n":{"v":12345,"w":12345,"s":"abc","t":"abc"}}`), 0)
	require.NoError(t, err)
	tests := []struct {
		name string
		a, b *Node
		want bool
	}{
		{"packed, same text", p.Get("a"), p.Get("b"), true},
		{"packed read twice", p.Get("a").Get("x"), p.Get("a").Get("x"), true},
		{"packed, equal but not the same text", p.Get("a"), p.Get("c"), false},
		{"numbers read from packed", p.Get("n").Get("v"), p.Get("n").Get("w"), true},
		{"strings read from packed", p.Get("n").Get("s"), p.Get("n").Get("t"), true},
		{"kinds differ", p.Get("n").Get("v"), p.Get("n").Get("s"), false},
		{"trees are the same only as nodes", p, NewObject([]string{"a"}, []*Node{NewNull()}), false},
		{"a tree and itself", p, p, true},
		{"literals", NewBool(true), NewBool(true), true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Same(tt.a, tt.b), tt.name)
	}
}
