// Tests of Value: exact text, strict parsing, equality by value.

package aguistate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValueText(t *testing.T) {
	t.Parallel()
	var zero Value
	assert.Equal(t, "null", zero.String(), "the zero Value is null")
	var v Value
	require.NoError(t, json.Unmarshal([]byte(` {"b":1.50, "a":[1e2,"<&>"]} `), &v))
	assert.Equal(t, `{"b":1.50,"a":[1e2,"<&>"]}`, v.String(), "digits, member order and characters as sent")
	out, err := json.Marshal(struct{ V Value }{v})
	require.NoError(t, err)
	assert.Equal(t, `{"V":{"b":1.50,"a":[1e2,"\u003c\u0026\u003e"]}}`, string(out), "encoding/json escapes HTML characters itself")
}

func TestValueUnmarshalIsStrict(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		`{"a":1,"a":2}`,
		`[1,]`,
		strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
	} {
		var v Value
		assert.ErrorIs(t, v.UnmarshalJSON([]byte(bad)), errDecode, "%.20s", bad)
	}
}

// TestValueEqual checks equality in the sense of RFC 6902 section 4.6.
func TestValueEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b   string
		want   bool
		reason string
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2.0],"a":1e0}`, true, "member order and number spelling do not count"},
		{`0`, `-0`, true, "0 and -0 are one number"},
		{`[1,2]`, `[2,1]`, false, "element order counts"},
		{`{"a":null}`, `{}`, false, "a null member is not a missing one"},
		{`"a"`, `"\u0061"`, true, "strings compare by code points"},
	}
	for _, tt := range tests {
		var a, b Value
		require.NoError(t, a.UnmarshalJSON([]byte(tt.a)))
		require.NoError(t, b.UnmarshalJSON([]byte(tt.b)))
		assert.Equal(t, tt.want, a.Equal(b), tt.reason)
		assert.Equal(t, tt.want, b.Equal(a), "symmetric: %s", tt.reason)
	}
	assert.True(t, Value{}.Equal(valueOf(mustParse(t, "null"))), "the zero Value equals null")
}
