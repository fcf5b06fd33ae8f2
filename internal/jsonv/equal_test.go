package jsonv

import (
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
