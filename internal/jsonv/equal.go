// Equality of JSON values (RFC 6902 section 4.6), numbers by exact decimal
// value.

package jsonv

import (
	"iter"
	"strconv"
	"strings"
)

// Equal reports whether a and b are the same JSON value in the sense of
// RFC 6902 section 4.6: numbers equal by exact decimal value, strings equal
// code point by code point, arrays equal element by element, and objects
// equal member by member whatever their order.
func Equal(a, b *Node) bool {
	if a == b {
		return true
	}
	if a.Kind() != b.Kind() {
		return false
	}
	if a.isPacked() || b.isPacked() {
		if a.isPacked() && b.isPacked() && a.packedText() == b.packedText() {
			return true
		}
		if a.Len() != b.Len() {
			return false
		}
		a, b = unpacked(a), unpacked(b)
	}
	switch a.Kind() {
	case Number:
		return NumberEqual(a.scalar().text, b.scalar().text)
	case String:
		ah, ahi := a.stringParts()
		bh, bhi := b.stringParts()
		if ahi == bhi {
			return ah == bh
		}
		return a.Text() == b.Text() // one ends in a high surrogate kept apart
	case Array:
		x, y := a.array().elems, b.array().elems
		if x.Len() != y.Len() {
			return false
		}
		if xs, ok := x.Flat(); ok {
			if ys, ok := y.Flat(); ok {
				for i, v := range xs {
					if !Equal(v, ys[i]) {
						return false
					}
				}
				return true
			}
		}
		return zip(x.Chunks(), y.Chunks(), func(v, w *Node) bool { return Equal(v, w) })
	case Object:
		x, y := a.object().members, b.object().members
		if x.Len() != y.Len() {
			return false
		}
		eq := func(v, w member) bool {
			if v.Key != w.Key {
				_, w.Value = y.Find(v.Key)
				if w.Value == nil {
					return false
				}
			}
			return Equal(v.Value, w.Value)
		}
		if xs, ok := x.Flat(); ok {
			if ys, ok := y.Flat(); ok {
				for i, v := range xs {
					if !eq(v, ys[i]) {
						return false
					}
				}
				return true
			}
		}
		return zip(x.Chunks(), y.Chunks(), eq)
	}
	return true // null, true, false
}

// zip calls eq on the elements of two sequences of the same length, pair by
// pair in order, until it returns false, and reports whether it never did.
// Runs that the two share (the same leaf of a persistent container) are
// skipped whole.
func zip[T any](xs, ys iter.Seq[[]T], eq func(x, y T) bool) bool {
	var runs [][]T
	for run := range ys {
		runs = append(runs, run)
	}
	k, off := 0, 0
	for run := range xs {
		if off == 0 && len(runs[k]) == len(run) && &runs[k][0] == &run[0] {
			k++
			continue
		}
		for _, x := range run {
			if !eq(x, runs[k][off]) {
				return false
			}
			if off++; off == len(runs[k]) {
				k, off = k+1, 0
			}
		}
	}
	return true
}

// decimal is a number literal reduced to sign, significant digits with no
// leading or trailing zeros, and the power of ten of the last digit, which
// may be any length (a JSON exponent has no bound).
type decimal struct {
	neg    bool
	digits string
	exp    exponent
}

// NumberEqual reports whether two JSON number literals have the same exact
// decimal value, so that 1, 1.0, 1e0 and 10e-1 are equal and so are 0 and -0.
// It takes time linear in the literals' length, however long their
// exponents.
func NumberEqual(a, b string) bool {
	if a == b {
		return true
	}
	x, y := parseDecimal(a), parseDecimal(b)
	if x.digits == "" || y.digits == "" {
		return x.digits == y.digits // zero equals only zero, whatever the sign
	}
	return x.neg == y.neg && x.digits == y.digits && x.exp == y.exp
}

// IntegerText returns the decimal integer literal, such as "-12" or "0",
// whose value is exactly that of the JSON number literal lit, when that
// value is an integer of at most maxDigits digits: "1.5e3" gives "1500",
// "-0.0" gives "0", and "1.5" and "1e30" (for 20 digits) give false. It
// takes time linear in the literal's length, however long its exponent.
func IntegerText(lit string, maxDigits int) (string, bool) {
	d := parseDecimal(lit)
	switch {
	case d.digits == "":
		return "0", true
	case d.exp.neg: // the digits end in a non-zero digit: a fraction is left
		return "", false
	case len(d.exp.digits) > len(strconv.Itoa(maxDigits)):
		return "", false
	}
	zeros := 0
	if d.exp.digits != "" {
		zeros, _ = strconv.Atoi(d.exp.digits)
	}
	if len(d.digits)+zeros > maxDigits {
		return "", false
	}
	text := d.digits + strings.Repeat("0", zeros)
	if d.neg {
		text = "-" + text
	}
	return text, true
}

func parseDecimal(lit string) decimal {
	var d decimal
	if strings.HasPrefix(lit, "-") {
		d.neg, lit = true, lit[1:]
	}
	mant, expText := lit, ""
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant, expText = lit[:i], lit[i+1:]
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	// The significant digits run from the first non-zero digit of
	// intPart+frac to the last; the value is digits × 10^(exp + shift).
	all := strings.TrimLeft(intPart+frac, "0")
	d.digits = strings.TrimRight(all, "0")
	d.exp = parseExponent(expText).plus(len(all) - len(d.digits) - len(frac))
	return d
}

// exponent is an integer of any size: a sign and decimal digits without
// leading zeros ("" for zero).
type exponent struct {
	neg    bool
	digits string
}

func parseExponent(text string) exponent {
	var e exponent
	switch {
	case strings.HasPrefix(text, "-"):
		e.neg, text = true, text[1:]
	case strings.HasPrefix(text, "+"):
		text = text[1:]
	}
	e.digits = strings.TrimLeft(text, "0")
	if e.digits == "" {
		e.neg = false
	}
	return e
}

// plus returns e + k, in time linear in the length of e.
func (e exponent) plus(k int) exponent {
	if k == 0 {
		return e
	}
	kneg := k < 0
	if kneg {
		k = -k
	}
	small := exponent{neg: kneg, digits: strconv.Itoa(k)}
	if e.digits == "" {
		return small
	}
	if e.neg == kneg {
		return exponent{neg: e.neg, digits: addDigits(e.digits, small.digits)}
	}
	// Opposite signs: the larger magnitude keeps its sign.
	if cmpDigits(e.digits, small.digits) >= 0 {
		return normalize(exponent{neg: e.neg, digits: subDigits(e.digits, small.digits)})
	}
	return normalize(exponent{neg: kneg, digits: subDigits(small.digits, e.digits)})
}

func normalize(e exponent) exponent {
	e.digits = strings.TrimLeft(e.digits, "0")
	if e.digits == "" {
		e.neg = false
	}
	return e
}

// cmpDigits compares two magnitudes without leading zeros.
func cmpDigits(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// addDigits returns a + b for decimal magnitudes.
func addDigits(a, b string) string {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := []byte(a)
	carry := 0
	for i := 1; i <= len(out); i++ {
		d := int(out[len(out)-i]-'0') + carry
		if i <= len(b) {
			d += int(b[len(b)-i] - '0')
		}
		out[len(out)-i], carry = byte('0'+d%10), d/10
		if carry == 0 && i >= len(b) {
			break
		}
	}
	if carry > 0 {
		out = append([]byte{'1'}, out...)
	}
	return string(out)
}

// subDigits returns a - b for decimal magnitudes with a >= b.
func subDigits(a, b string) string {
	out := []byte(a)
	borrow := 0
	for i := 1; i <= len(out); i++ {
		d := int(out[len(out)-i]-'0') - borrow
		if i <= len(b) {
			d -= int(b[len(b)-i] - '0')
		}
		borrow = 0
		if d < 0 {
			d, borrow = d+10, 1
		}
		out[len(out)-i] = byte('0' + d)
		if borrow == 0 && i >= len(b) {
			break
		}
	}
	return string(out)
}
