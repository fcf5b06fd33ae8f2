package jsonv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParsePointer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   []string
		err    bool
		reason string
	}{
		{"", nil, false, "the whole document"},
		{"/", []string{""}, false, `the member named ""`},
		{"/a/b", []string{"a", "b"}, false, "two tokens"},
		{"/a~1b/m~0n", []string{"a/b", "m~n"}, false, "RFC 6901 section 4 unescaping"},
		{"/~01", []string{"~1"}, false, "~0 first, so ~01 is ~1"},
		{"//", []string{"", ""}, false, "empty tokens"},
		{"a", nil, true, "must start with /"},
		{"/a~", nil, true, "~ at the end"},
		{"/a~2", nil, true, "~ followed by 2"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParsePointer(tt.in)
			if tt.err {
				assert.ErrorIs(t, err, ErrPointer, tt.reason)
				return
			}
			assert.NoError(t, err, tt.reason)
			assert.Equal(t, tt.want, got, tt.reason)
			assert.Equal(t, tt.in, FormatPointer(got), "formats back")
		})
	}
}

func TestArrayIndex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		token string
		max   int
		want  int
		ok    bool
	}{
		{"0", 5, 0, true}, {"5", 5, 5, true}, {"6", 5, 0, false}, {"01", 5, 0, false},
		{"-1", 5, 0, false}, {"+1", 5, 0, false}, {"-", 5, 0, false}, {"", 5, 0, false},
		{"1e0", 5, 0, false}, {"99999999999999999999999", 5, 0, false},
	}
	for _, tt := range tests {
		got, ok := ArrayIndex(tt.token, tt.max)
		assert.Equal(t, tt.ok, ok, tt.token)
		assert.Equal(t, tt.want, got, tt.token)
	}
}
