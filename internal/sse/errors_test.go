package sse

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, reason string
		err          *Error
		want         string
	}{
		{"too-large", "the sentinel's prefix is not repeated",
			&Error{Event: 3, Err: fmt.Errorf("%w: exceeds %d bytes", ErrTooLarge, 16<<20)},
			"aguistate: event 3: payload too large: exceeds 16777216 bytes"},
		{"syntax", "syntax errors read the same way",
			&Error{Event: 1, Err: fmt.Errorf("%w: json array: found \"x\"", ErrSyntax)},
			`aguistate: event 1: syntax error: json array: found "x"`},
		{"io", "a reader's error is shown as is",
			&Error{Event: 2, Err: io.ErrUnexpectedEOF},
			"aguistate: event 2: unexpected EOF"},
		{"nil", "a zero Error does not panic",
			&Error{},
			"aguistate: event 0: unknown error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, tc.err.Error(), tc.reason)
			assert.Equal(t, tc.err.Err, errors.Unwrap(tc.err), tc.reason)
		})
	}
}

func TestSentinels(t *testing.T) {
	t.Parallel()
	for _, err := range []error{ErrTooLarge, ErrSyntax} {
		assert.Regexp(t, `^aguistate: [a-z ]+$`, err.Error())
	}
}
