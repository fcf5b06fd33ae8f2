// Tests of the parser: round trips, rejections, depth, sizes, messages.

package jsonv

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want, reason string
	}{
		{"big integer", `12345678901234567890`, ``, "numbers keep their digits, no float64 rounding"},
		{"long fraction", `0.1000000000000000000001`, ``, "numbers keep their digits"},
		{"trailing zero", `1.0`, ``, "1.0 stays 1.0"},
		{"exponent", `1e2`, ``, "1e2 stays 1e2"},
		{"negative zero", `-0`, ``, "-0 stays -0"},
		{"member order", `{"b":1,"a":2,"c":{"z":0,"y":1}}`, ``, "members keep arrival order"},
		{"white space", " {\"a\" : [ 1 , 2 ] }\n", `{"a":[1,2]}`, "insignificant white space is dropped"},
		{"escapes", `"a\"b\\c\/d\b\f\n\r\t\u0001"`, `"a\"b\\c/d\b\f\n\r\t\u0001"`, "only required escapes are written back"},
		{"html characters", `"<a href='x'>&amp;</a>"`, ``, "<, > and & are not re-escaped"},
		{"unicode escape", `"\u00e9\u20ac"`, `"é€"`, "escapes decode to code points"},
		{"surrogate pair", `"\ud83d\ude00"`, `"😀"`, "a pair decodes to one code point"},
		{"lone high surrogate", `"a\ud800b"`, ``, "a lone surrogate round-trips as its escape"},
		{"lone low surrogate", `"\udfff"`, ``, "a lone surrogate round-trips as its escape"},
		{"reversed pair", `"\ude00\ud83d"`, ``, "two lone surrogates stay two escapes"},
		{"literal utf-8", `"日本語"`, ``, "UTF-8 passes through"},
		{"scalars", `[true,false,null,"",0,-1.5E-3]`, ``, "every scalar kind"},
		{"empty containers", `[{},[],{"":{}}]`, ``, "empty object and array, empty member name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n, err := Parse([]byte(tt.in), 0)
			require.NoError(t, err, tt.reason)
			want := tt.want
			if want == "" {
				want = tt.in
			}
			assert.Equal(t, want, string(Marshal(n)), tt.reason)
		})
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	tests := []struct {
		name, in string
		want     error
		reason   string
	}{
		{"empty", ``, ErrSyntax, "no value"},
		{"duplicate member", `{"a":1,"a":2}`, ErrDuplicateName, "two parsers could pick different duplicates"},
		{"nested duplicate", `[{"x":{"b":1,"c":2,"b":3}}]`, ErrDuplicateName, "duplicates are rejected anywhere"},
		{"duplicate in a wide object", `{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"e":2}`, ErrDuplicateName, "the set used for wide objects finds it too"},
		{"escaped duplicate", `{"a":1,"\u0061":2}`, ErrDuplicateName, "names compare after unescaping"},
		{"too deep", deep, ErrTooDeep, "1001 nested arrays exceed the default 1000"},
		{"leading zero", `01`, ErrSyntax, "RFC 8259 section 6"},
		{"plus sign", `+1`, ErrSyntax, "RFC 8259 section 6"},
		{"bare dot", `1.`, ErrSyntax, "digits must follow the point"},
		{"bare exponent", `1e`, ErrSyntax, "digits must follow e"},
		{"NaN", `NaN`, ErrSyntax, "not JSON"},
		{"trailing comma array", `[1,]`, ErrSyntax, "not JSON"},
		{"trailing comma object", `{"a":1,}`, ErrSyntax, "not JSON"},
		{"single quotes", `{'a':1}`, ErrSyntax, "not JSON"},
		{"control character", "\"a\nb\"", ErrSyntax, "control characters must be escaped"},
		{"invalid utf-8", "\"\xff\"", ErrSyntax, "RFC 8259 section 8.1: UTF-8 only"},
		{"invalid utf-8 after escape", "\"\\n\xff\"", ErrSyntax, "checked on the slow path too"},
		{"bad escape", `"\x"`, ErrSyntax, "not a JSON escape"},
		{"short unicode escape", `"\u12"`, ErrSyntax, "four hex digits"},
		{"trailing data", `{} {}`, ErrSyntax, "one value only"},
		{"unterminated", `{"a":[1,2`, ErrSyntax, "truncated"},
		{"bad literal", `tru`, ErrSyntax, "truncated literal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.in), 0)
			require.Error(t, err, tt.reason)
			assert.ErrorIs(t, err, tt.want, tt.reason)
			var se *SyntaxError
			assert.True(t, errors.As(err, &se), "a *SyntaxError")
		})
	}
}

func TestParseDepthLimit(t *testing.T) {
	t.Parallel()
	at := strings.Repeat("[", 5) + strings.Repeat("]", 5)
	_, err := Parse([]byte(at), 5)
	assert.NoError(t, err, "exactly at the limit")
	_, err = Parse([]byte("["+at+"]"), 5)
	assert.ErrorIs(t, err, ErrTooDeep, "one past the limit")
	huge := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	_, err = Parse([]byte(huge), 0)
	assert.ErrorIs(t, err, ErrTooDeep, "100 000 nested arrays fail cleanly")
}

func TestSizeAndDepth(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`null`, `"a\"\n\u0001\ud800"`, `[]`, `{}`, `[1,[2,[3]],{"k":{"l":[]}}]`, `{"a\/":"\u00e9","b":[true,false]}`} {
		n, err := Parse([]byte(in), 0)
		require.NoError(t, err)
		assert.Equal(t, len(Marshal(n)), n.Size(), in)
	}
	n, err := Parse([]byte(`[1,[2,[3]],{"k":{"l":[]}}]`), 0)
	require.NoError(t, err)
	assert.Equal(t, 4, n.Depth())
}

// TestParseMessages checks that a syntax error says what it found where
// it found it.
func TestParseMessages(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, reason string }{
		{`{"a":01}`, `invalid JSON at offset 6: invalid number: a leading zero`, "not a missing comma"},
		{`01`, `invalid JSON at offset 1: invalid number: a leading zero`, "not data after the value"},
		{"[\xEF\xBB\xBF1]", `invalid JSON at offset 1: expected a value, found U+FEFF`, "a byte order mark by its code point"},
		{"[\xFF]", `invalid JSON at offset 1: expected a value, found byte 0xFF`, "a byte that is not UTF-8 by its value"},
		{`{"a":1 "b":2}`, `invalid JSON at offset 7: expected ',' or '}' in an object, found '"'`, "what was found"},
		{`"\x"`, `invalid JSON at offset 2: invalid escape: '\' followed by 'x'`, "the escape"},
		{`[1] x`, `invalid JSON at offset 4: expected the end of the input after the value, found 'x'`, "after the value"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.in), 0)
		assert.EqualError(t, err, tt.want, tt.reason)
	}
}

// TestParseWide checks containers large enough to be trees: round trips,
// cached sizes and depths, and duplicates found among many members.
func TestParseWide(t *testing.T) {
	t.Parallel()
	elems := make([]string, 10_000) // more than the parser's stack holds at once
	for i := range elems {
		elems[i] = fmt.Sprintf(`[%d,{"k":"v%d"}]`, i, i%7)
	}
	text := "[" + strings.Join(elems, ",") + "]"
	n, err := Parse([]byte(text), 0)
	require.NoError(t, err)
	assert.Equal(t, text, string(Marshal(n)))
	assert.Equal(t, len(text), n.Size())
	assert.Equal(t, 3, n.Depth())
	assert.Equal(t, 10_000, n.Len())
	assert.Equal(t, `[9999,{"k":"v3"}]`, string(Marshal(n.Elem(9999))))

	members := make([]string, 100)
	for i := range members {
		members[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	obj := "{" + strings.Join(members, ",") + "}"
	o, err := Parse([]byte(obj), 0)
	require.NoError(t, err)
	assert.Equal(t, obj, string(Marshal(o)))
	assert.Equal(t, "57", o.Get("k57").Text())
	dup := obj[:len(obj)-1] + `,"k50":1}`
	_, err = Parse([]byte(dup), 0)
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, ErrDuplicateName)
	assert.Equal(t, len(obj), se.Offset, "the offset of the second k50")
	assert.Contains(t, se.Msg, `"k50"`)
}

// TestParseShares checks that small scalars and repeated short values are
// shared, and that sharing never changes a literal.
func TestParseShares(t *testing.T) {
	t.Parallel()
	n, err := Parse([]byte(`[0,7,1023,1024,0,-0,0.0,1e2,"","a","a","ab","ab",null,true]`), 0)
	require.NoError(t, err)
	assert.Equal(t, `[0,7,1023,1024,0,-0,0.0,1e2,"","a","a","ab","ab",null,true]`, string(Marshal(n)), "literals kept")
	assert.Same(t, n.Elem(0), n.Elem(4), "small integers are shared")
	assert.Same(t, NewNumber("7"), n.Elem(1))
	assert.Same(t, NewString("a"), n.Elem(9), "one-byte strings are shared")
	assert.Same(t, n.Elem(11), n.Elem(12), "a repeated short string is made once")
	assert.NotSame(t, n.Elem(0), n.Elem(5), "-0 is not 0's literal")
	assert.Same(t, NewNull(), n.Elem(13))
	assert.Same(t, NewBool(true), n.Elem(14))
}

// TestPlainRun checks plainRun against a byte-by-byte reading: every byte
// value at every position of runs that cross the eight-byte words.
func TestPlainRun(t *testing.T) {
	want := func(b []byte) int {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				return i
			}
		}
		return len(b)
	}
	// A second byte after the first tells whether a borrow from the
	// first stops the run too early or too late.
	for n := range 20 {
		for at := range n {
			for c := range 256 {
				for _, after := range []byte{'a', '"', 0, 0x1f, 0x20, 0x80, 0xff} {
					b := bytes.Repeat([]byte{'a'}, n)
					b[at] = byte(c)
					if at+1 < n {
						b[at+1] = after
					}
					if got := plainRun(b); got != want(b) {
						t.Fatalf("plainRun(%q) = %d, want %d", b, got, want(b))
					}
				}
			}
		}
	}
}
