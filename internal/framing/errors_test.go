// Tests of the error texts and kinds.

package framing

import (
	"encoding/json"
	"errors"
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
		{"too-large", "the kind's name is not repeated in the text",
			&Error{Event: 3, Err: &kindError{kind: ErrTooLarge, msg: "the event is longer than 16777216 bytes"}},
			"event 3: the event is longer than 16777216 bytes"},
		{"syntax with a cause", "the cause's detail follows the message",
			&Error{Event: 1, Err: &kindError{kind: ErrSyntax, msg: "json array: invalid element", cause: &json.SyntaxError{}}},
			"event 1: json array: invalid element: "},
		{"io", "a reader's error is shown as is",
			&Error{Event: 2, Err: io.ErrUnexpectedEOF},
			"event 2: unexpected EOF"},
		{"nil", "a zero Error does not panic",
			&Error{},
			"event 0: unknown error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, tc.err.Error(), tc.reason)
			assert.Equal(t, tc.err.Err, errors.Unwrap(tc.err), tc.reason)
		})
	}
}

// TestKinds checks that a failure is its kind and no other, and that the
// cause stays in the chain.
func TestKinds(t *testing.T) {
	t.Parallel()
	cause := &json.SyntaxError{}
	err := error(&Error{Event: 1, Err: &kindError{kind: ErrSyntax, msg: "m", cause: cause}})
	assert.ErrorIs(t, err, ErrSyntax)
	assert.NotErrorIs(t, err, ErrTooLarge)
	var se *json.SyntaxError
	assert.ErrorAs(t, err, &se)
	assert.Same(t, cause, se)
}
