// Tests of Equal and NumberEqual.

package jsonv

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b   string
		want   bool
		reason string
	}{
		{`1`, `1.0`, true, "exact decimal value"},
		{`1`, `1e0`, true, "exact decimal value"},
		{`1`, `10e-1`, true, "exact decimal value"},
		{`100`, `1e2`, true, "exact decimal value"},
		{`0.5`, `5E-1`, true, "exact decimal value"},
		{`0`, `-0`, true, "zero has no sign"},
		{`0.0`, `-0e10`, true, "zero has no sign"},
		{`-1`, `1`, false, "sign matters for non-zero"},
		{`12345678901234567890`, `12345678901234567000`, false, "no float64 rounding"},
		{`0.1000000000000000000001`, `0.1`, false, "no float64 rounding"},
		{`1e400`, `10e399`, true, "beyond float64 range"},
		{`1e99999999999999999999`, `1e99999999999999999998`, false, "huge exponents compare exactly"},
		{`1`, `"1"`, false, "kinds differ"},
		{`null`, `false`, false, "kinds differ"},
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2.0],"a":1}`, true, "objects regardless of member order"},
		{`{"a":1}`, `{"a":1,"b":null}`, false, "a missing member is not null"},
		{`[1,2]`, `[2,1]`, false, "arrays element-wise"},
		{`[null]`, `[null]`, true, "arrays holding null"},
		{`"\u00e9"`, `"é"`, true, "strings by code points"},
		{`"e\u0301"`, `"é"`, false, "no Unicode normalization"},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			t.Parallel()
			a, err := Parse([]byte(tt.a), 0)
			require.NoError(t, err)
			b, err := Parse([]byte(tt.b), 0)
			require.NoError(t, err)
			assert.Equal(t, tt.want, Equal(a, b), tt.reason)
			assert.Equal(t, tt.want, Equal(b, a), "symmetric: "+tt.reason)
		})
	}
}

func TestNumberEqualLongExponents(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("9", 40)
	tests := []struct {
		a, b string
		want bool
	}{
		{"1e" + long, "10e" + long[:39] + "8", true},
		{"1e" + long, "0.1e1" + long[1:], false},
		{"1e-" + long, "0.1e-" + long[:39] + "8", true},
		{"1e1" + strings.Repeat("0", 40), "10e" + long, true}, // 10^(10^40) = 10 × 10^(10^40 - 1): a carry through every digit
		{"100e-3", "0.1", true},
		{"1.000e+00003", "1000", true},
		{"5e-0", "5", true},
		{"1e" + long, "1e" + long[:39] + "8", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, NumberEqual(tt.a, tt.b), "%s vs %s", tt.a, tt.b)
		assert.Equal(t, tt.want, NumberEqual(tt.b, tt.a), "%s vs %s", tt.b, tt.a)
	}
}

// TestExponentPlus checks the exponent arithmetic against math/big.
func TestExponentPlus(t *testing.T) {
	t.Parallel()
	for _, e := range []string{"0", "1", "-1", "9", "-9", "10", "-10", "999", "-1000", "12345678901234567890", "-100000000000000000000"} {
		for _, k := range []int{0, 1, -1, 9, -9, 10, -10, 1000, -1000, 123456} {
			want := new(big.Int)
			want.SetString(e, 10)
			want.Add(want, big.NewInt(int64(k)))
			got := parseExponent(e).plus(k)
			text := got.digits
			if text == "" {
				text = "0"
			}
			if got.neg {
				text = "-" + text
			}
			assert.Equal(t, want.String(), text, "%s + %d", e, k)
		}
	}
}

func TestIntegerText(t *testing.T) {
	tests := []struct {
		lit, want string
		ok        bool
	}{
		{"25419.0", "25419", true},
		{"1.5e3", "1500", true},
		{"1E2", "100", true},
		{"-0.0", "0", true},
		{"-0", "0", true},
		{"0e-7", "0", true},
		{"-12", "-12", true},
		{"120e-1", "12", true},
		{"18446744073709551615", "18446744073709551615", true},
		{"1.5", "", false},
		{"1e-1", "", false},
		{"1e20", "", false}, // 21 digits
		{"1e99999999999999999999", "", false},
		{"1e-99999999999999999999", "", false},
	}
	for _, tt := range tests {
		got, ok := IntegerText(tt.lit, 20)
		if got != tt.want || ok != tt.ok {
			t.Errorf("IntegerText(%q, 20) = %q, %v; want %q, %v", tt.lit, got, ok, tt.want, tt.ok)
		}
	}
}

// TestEqualTrees compares containers large enough to be trees, sharing
// leaves or not.
func TestEqualTrees(t *testing.T) {
	t.Parallel()
	elems, members, reversed := make([]string, 500), make([]string, 500), make([]string, 500)
	for i := range elems {
		elems[i] = fmt.Sprint(i)
		members[i] = fmt.Sprintf(`"k%d":%d`, i, i)
		reversed[499-i] = members[i]
	}
	parse := func(s string) *Node {
		n, err := Parse([]byte(s), 0)
		require.NoError(t, err)
		return n
	}
	a := parse("[" + strings.Join(elems, ",") + "]")
	assert.True(t, Equal(a, parse("["+strings.Join(elems, ",")+"]")), "equal, nothing shared")
	b := WithElem(a, 499, NewNumber("499.0"))
	assert.True(t, Equal(a, b), "equal, all but one leaf shared")
	c := WithElem(a, 250, NewNumber("0"))
	assert.False(t, Equal(a, c), "one element differs")
	assert.False(t, Equal(c, a))
	o := parse("{" + strings.Join(members, ",") + "}")
	assert.True(t, Equal(o, parse("{"+strings.Join(reversed, ",")+"}")), "objects whatever their order")
	assert.False(t, Equal(o, WithMember(o, "k7", NewNull())))
	assert.False(t, Equal(o, WithMember(WithoutMember(o, "k7"), "k7x", NewNumber("7"))), "a name differs")
}
