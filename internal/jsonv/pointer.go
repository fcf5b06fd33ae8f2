// JSON Pointers (RFC 6901): parsing, escaping, and evaluation against a value.

package jsonv

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrPointer reports a string that is not a JSON Pointer (RFC 6901 section 3).
var ErrPointer = errors.New("not a JSON Pointer")

// ParsePointer splits a JSON Pointer into its unescaped reference tokens
// (RFC 6901 sections 3 and 4). "" is the whole document and has no tokens.
// Any other pointer starts with "/", and "~" in it is followed by "0" (for
// "~") or "1" (for "/"). Failures wrap [ErrPointer].
func ParsePointer(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	return AppendTokens(make([]string, 0, strings.Count(s, "/")), s)
}

// CheckPointer returns the error [ParsePointer] returns for s, without
// splitting s: a pointer without "~" is read once and allocates nothing.
func CheckPointer(s string) error {
	if s != "" && s[0] != '/' {
		return errNoSlash
	}
	for i := strings.IndexByte(s, '~'); i >= 0; {
		if i+1 == len(s) || (s[i+1] != '0' && s[i+1] != '1') {
			return errBadTilde
		}
		j := strings.IndexByte(s[i+2:], '~')
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return nil
}

var (
	errNoSlash  = fmt.Errorf(`%w: it does not start with "/"`, ErrPointer)
	errBadTilde = fmt.Errorf(`%w: "~" is not followed by "0" or "1"`, ErrPointer)
)

// AppendTokens appends the reference tokens of the JSON Pointer s to dst,
// as [ParsePointer] returns them, and fails as it does. A dst with room
// for them, such as a slice of an array on the caller's stack, spares the
// allocation.
func AppendTokens(dst []string, s string) ([]string, error) {
	if err := CheckPointer(s); err != nil || s == "" {
		return dst, err
	}
	// Split in one tight pass, then unescape the tokens that hold "~": a
	// long path of short tokens costs a few instructions a byte.
	first := len(dst)
	dst = slices.Grow(dst, strings.Count(s, "/"))
	out := dst[first:cap(dst)]
	k, start := 0, 1
	for i := 1; i < len(s); i++ {
		if s[i] == '/' {
			out[k] = s[start:i]
			k, start = k+1, i+1
		}
	}
	out[k] = s[start:]
	out = out[:k+1]
	if strings.IndexByte(s, '~') >= 0 {
		for i, t := range out {
			if strings.IndexByte(t, '~') >= 0 {
				out[i] = unescapeToken(t)
			}
		}
	}
	return dst[:first+k+1], nil
}

// unescapeToken returns the reference token t, which holds "~" followed
// by "0" or "1" only (see [CheckPointer]), with "~0" read as "~" and "~1"
// as "/".
func unescapeToken(t string) string {
	var b strings.Builder
	for j := 0; j < len(t); j++ {
		if t[j] != '~' {
			b.WriteByte(t[j])
			continue
		}
		if t[j+1] == '0' {
			b.WriteByte('~')
		} else {
			b.WriteByte('/')
		}
		j++
	}
	return b.String()
}

var tokenEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// EscapeToken escapes a member name as a reference token (RFC 6901 section
// 3): "~" becomes "~0" and "/" becomes "~1".
func EscapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return tokenEscaper.Replace(s)
}

// FormatPointer joins reference tokens back into a JSON Pointer.
func FormatPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(EscapeToken(t))
	}
	return b.String()
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
// 6901 section 4), whatever its size.
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

// Resolve returns the value that tokens name in root (RFC 6901 section 4).
// The error names the first token that names nothing, and where.
func Resolve(root *Node, tokens []string) (*Node, error) {
	cur := root
	for i, t := range tokens {
		next, _, err := Child(cur, t)
		if err != nil {
			return nil, At(err, tokens[:i+1])
		}
		cur = next
	}
	return cur, nil
}

// Child returns the member or element of c that reference token t names,
// and its position among c's members or elements. It fails when c is not a
// container or has no such child: "-" and an index out of range name no
// element.
func Child(c *Node, t string) (*Node, int, error) {
	switch c.Kind() {
	case Object:
		if i, v := c.find(t); i >= 0 {
			return v, i, nil
		}
		return nil, 0, fmt.Errorf("no member %s", Quote(t))
	case Array:
		i, err := ElemIndex(c, t)
		if err != nil {
			return nil, 0, err
		}
		return c.Elem(i), i, nil
	default:
		return nil, 0, fmt.Errorf("%s has no member or element %s", c.Kind().Phrase(), Quote(t))
	}
}

// ElemIndex reads t as the index of an element of array a.
func ElemIndex(a *Node, t string) (int, error) {
	if t == "-" {
		return 0, errors.New(`"-" names no element`)
	}
	i, ok := ArrayIndex(t, a.Len()-1)
	if !ok {
		return 0, badIndex(a, t)
	}
	return i, nil
}

// InsertIndex reads t as the position of a new element of array a (RFC
// 6902 section 4.1): an index from 0 to a's length, or "-" for its length.
func InsertIndex(a *Node, t string) (int, error) {
	if t == "-" {
		return a.Len(), nil
	}
	i, ok := ArrayIndex(t, a.Len())
	if !ok {
		return 0, badIndex(a, t)
	}
	return i, nil
}

func badIndex(a *Node, t string) error {
	if IsArrayIndex(t) {
		return fmt.Errorf("index %s is out of range for an array of %d elements", Shorten(t), a.Len())
	}
	return fmt.Errorf("%s is not an array index", Quote(t))
}

// At adds to err the pointer of the tokens where it happened:
// `cause (at "/a/0")`.
func At(err error, tokens []string) error {
	return fmt.Errorf("%w (at %s)", err, Quote(FormatPointer(tokens)))
}
