// Texts for error messages: kinds with their articles, and values quoted
// and cut short.

package jsonv

import (
	"strconv"
	"unicode/utf8"
)

// Phrase returns the kind as a noun phrase for a message: "null", "a
// boolean", "a number", "a string", "an array" or "an object".
func (k Kind) Phrase() string {
	switch k {
	case Null:
		return "null"
	case False, True:
		return "a boolean"
	case Number:
		return "a number"
	case String:
		return "a string"
	case Array:
		return "an array"
	case Object:
		return "an object"
	}
	return "an invalid value"
}

// maxShown is the most bytes of one value that a message shows.
const maxShown = 64

// Shorten returns s for a message. A value longer than 64 bytes is cut
// after whole characters and followed by "…" and its length in bytes.
func Shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	return s[:cut(s)] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// Quote returns s quoted for a message, with Go escapes, cut short as
// [Shorten] does: "abc"… (100 bytes).
func Quote(s string) string {
	if len(s) <= maxShown {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:cut(s)]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// cut returns where to cut s, which is longer than maxShown: at most
// maxShown bytes, at the start of a character.
func cut(s string) int {
	i := maxShown
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
