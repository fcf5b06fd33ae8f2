// Tests of the texts for error messages.

package jsonv

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestPhrase(t *testing.T) {
	t.Parallel()
	want := map[Kind]string{Null: "null", False: "a boolean", True: "a boolean", Number: "a number",
		String: "a string", Array: "an array", Object: "an object"}
	for k, w := range want {
		assert.Equal(t, w, k.Phrase(), k.String())
	}
}

func TestQuoteCutsLongValues(t *testing.T) {
	t.Parallel()
	assert.Equal(t, `"a\"b"`, Quote(`a"b`), "short values are quoted whole")
	assert.Equal(t, "abc", Shorten("abc"))
	long := strings.Repeat("é", 1000) // 2,000 bytes
	q := Quote(long)
	assert.Less(t, len(q), 100)
	assert.True(t, strings.HasSuffix(q, `… (2000 bytes)`), q)
	s := Shorten(long)
	assert.True(t, utf8.ValidString(s), "cut between characters: %q", s)
	assert.True(t, strings.HasSuffix(s, "… (2000 bytes)"), s)
}
