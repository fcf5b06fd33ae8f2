package jsonv

import (
	"errors"
	"fmt"
	"strings"
)

// ErrPointer reports a string that is not a JSON Pointer (RFC 6901 section 3).
var ErrPointer = errors.New("not a JSON Pointer")

// ParsePointer splits a JSON Pointer into its unescaped reference tokens
// (RFC 6901 sections 3 and 4): "" is the whole document and gives no tokens;
// any other pointer starts with "/", and "~" in it is followed only by "0"
// (for "~") or "1" (for "/").
func ParsePointer(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if s[0] != '/' {
		return nil, fmt.Errorf(`%w: it does not start with "/"`, ErrPointer)
	}
	tokens := strings.Split(s[1:], "/")
	for i, t := range tokens {
		if strings.IndexByte(t, '~') < 0 {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(t); j++ {
			if t[j] != '~' {
				b.WriteByte(t[j])
				continue
			}
			if j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1') {
				return nil, fmt.Errorf(`%w: "~" is not followed by "0" or "1"`, ErrPointer)
			}
			if t[j+1] == '0' {
				b.WriteByte('~')
			} else {
				b.WriteByte('/')
			}
			j++
		}
		tokens[i] = b.String()
	}
	return tokens, nil
}

// ArrayIndex reads a reference token as an array index (RFC 6901 section 4):
// "0", or a digit 1 to 9 followed by digits, with no sign and no leading
// zero. It reports false for anything else, including "-", and for indexes
// above max.
func ArrayIndex(token string, max int) (int, bool) {
	if len(token) > 18 || !IsArrayIndex(token) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(token); i++ {
		n = n*10 + int(token[i]-'0')
	}
	if n > max {
		return 0, false
	}
	return n, true
}

// IsArrayIndex reports whether token has the form of an array index (RFC
// 6901 section 4: "0", or a digit 1 to 9 followed by digits), whatever its
// size.
func IsArrayIndex(token string) bool {
	if token == "" || (len(token) > 1 && token[0] == '0') {
		return false
	}
	for i := 0; i < len(token); i++ {
		if token[i] < '0' || token[i] > '9' {
			return false
		}
	}
	return true
}

// FormatPointer joins reference tokens back into a JSON Pointer.
func FormatPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}
