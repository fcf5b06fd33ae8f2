// Tests of reading values: StringMember reads as Get does, packed or not.

package jsonv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStringMember(t *testing.T) {
	text := `{"s":"plain","e":"a\"bé\ud800","n":1,"o":{"s":"x"},"empty":""}`
	tests := []struct {
		name   string
		reason string
		pack   int // ParseFrom's packFrom: 0 keeps the object a tree, 1 packs it
		member string
		want   string
		ok     bool
	}{
		{"tree string", "a member of a tree", 0, "s", "plain", true},
		{"packed string", "the literal's body, no node made", 1, "s", "plain", true},
		{"tree escapes", "decoded, lone surrogate kept", 0, "e", "a\"bé\xed\xa0\x80", true},
		{"packed escapes", "decoded as Parse decodes it", 1, "e", "a\"bé\xed\xa0\x80", true},
		{"tree empty", "an empty string is a string", 0, "empty", "", true},
		{"packed empty", "an empty string is a string", 1, "empty", "", true},
		{"tree number", "not a string", 0, "n", "", false},
		{"packed number", "not a string", 1, "n", "", false},
		{"packed object", "not a string", 1, "o", "", false},
		{"tree absent", "no such member", 0, "x", "", false},
		{"packed absent", "no such member", 1, "x", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := ParseFrom([]byte(text), 0, tt.pack)
			require.NoError(t, err)
			require.Equal(t, tt.pack == 1, n.isPacked(), "packed")
			got, ok := n.StringMember(tt.member)
			assert.Equal(t, tt.want, got, tt.reason)
			assert.Equal(t, tt.ok, ok, tt.reason)
			if v := n.Get(tt.member); ok {
				assert.Equal(t, v.Text(), got, "as Get(name).Text()")
			} else {
				assert.True(t, v == nil || v.Kind() != String, "Get agrees")
			}
		})
	}
	for _, v := range []*Node{NewString("s"), NewArray([]*Node{NewString("s")}), NewNull()} {
		_, ok := v.StringMember("s")
		assert.False(t, ok, "not an object: %s", v.Kind())
	}
}

// TestMemberSummary checks that memberSummary, which reads a value's
// header once, measures a member as Size and Depth do, for every way a
// value is held: a shared scalar, a string, a packed container, a tree
// array and object, and empty ones.
func TestMemberSummary(t *testing.T) {
	long := `{"a":"` + strings.Repeat("x", 300) + `","b":[1,2,{"c":null}]}`
	for _, text := range []string{
		`1`, `"ab\n"`, `null`, `[]`, `{}`, `[1,[2]]`, `{"k":{"x":1}}`,
		long, `[` + long + `,` + long + `]`,
	} {
		t.Run(text[:min(len(text), 12)], func(t *testing.T) {
			doc, err := Parse([]byte(`{"v":`+text+`}`), 0)
			require.NoError(t, err)
			v := doc.Get("v")
			want := summary{len("name") + 3 + v.Size(), int32(v.Depth()), 1}
			assert.Equal(t, want, memberSummary("name", v))
		})
	}
}
