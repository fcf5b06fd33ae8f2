package jsonv

import (
	"math/big"
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
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case Number:
		return NumberEqual(a.str, b.str)
	case String:
		return a.str == b.str
	case Array:
		if len(a.elems) != len(b.elems) {
			return false
		}
		for i := range a.elems {
			if !Equal(a.elems[i], b.elems[i]) {
				return false
			}
		}
		return true
	case Object:
		if len(a.obj.names) != len(b.obj.names) {
			return false
		}
		for i, name := range a.obj.names {
			j := b.Lookup(name)
			if j < 0 || !Equal(a.obj.vals[i], b.obj.vals[j]) {
				return false
			}
		}
		return true
	}
	return true // null, true, false
}

// decimal is a number literal reduced to sign, significant digits with no
// leading or trailing zeros, and the power of ten of the last digit.
type decimal struct {
	neg    bool
	digits string
	exp    *big.Int
}

// NumberEqual reports whether two JSON number literals have the same exact
// decimal value, so that 1, 1.0, 1e0 and 10e-1 are equal and so are 0 and -0.
func NumberEqual(a, b string) bool {
	if a == b {
		return true
	}
	x, y := parseDecimal(a), parseDecimal(b)
	if x.digits == "" || y.digits == "" {
		return x.digits == y.digits // zero equals only zero, whatever the sign
	}
	return x.neg == y.neg && x.digits == y.digits && x.exp.Cmp(y.exp) == 0
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
	all := strings.TrimLeft(intPart+frac, "0")
	trimmed := strings.TrimRight(all, "0")
	d.digits = trimmed
	d.exp = new(big.Int)
	if expText != "" {
		d.exp.SetString(strings.TrimPrefix(expText, "+"), 10)
	}
	// value = all * 10^(exp - len(frac)); dropping trailing zeros raises the exponent.
	d.exp.Add(d.exp, big.NewInt(int64(len(all)-len(trimmed)-len(frac))))
	return d
}
