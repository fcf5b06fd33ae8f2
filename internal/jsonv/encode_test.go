package jsonv

import "testing"

// TestStringSize checks StringSize against the length of what AppendString
// writes: every byte alone and beside others, escapes, and WTF-8
// surrogates whole, cut short, and after a byte that is not 0xA0 or more.
func TestStringSize(t *testing.T) {
	strs := []string{"", "abc", `a"b\c`, "\x00\x1f\x7f", "é€😀", "\xed\xa0\x80", "\xed\xbf\xbfx", "\xed\xa0", "\xed\x9f\xbf", "x\xed"}
	for c := range 256 {
		strs = append(strs, string([]byte{byte(c)}), string([]byte{'a', byte(c), 0xA0, 'z'}))
	}
	for _, s := range strs {
		if got, want := StringSize(s), len(AppendString(nil, s)); got != want {
			t.Errorf("StringSize(%q) = %d, want %d", s, got, want)
		}
	}
}
