// Value: an immutable JSON value, kept exactly as it arrived.

package aguistate

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Value is an immutable JSON value held by a [Consumer]: the state, a
// message, an interrupt. It is kept as it arrived: numbers keep their
// digits and object members their order. A Value is safe to share between
// goroutines; the Consumer replaces values, it never changes them. The
// zero Value is null.
type Value struct{ n *jsonv.Node }

func valueOf(n *jsonv.Node) Value { return Value{n: n} }

func (v Value) node() *jsonv.Node {
	if v.n == nil {
		return jsonv.NewNull()
	}
	return v.n
}

// MarshalJSON returns the value's compact JSON text (RFC 8259), the same on
// every call. It never fails.
func (v Value) MarshalJSON() ([]byte, error) { return jsonv.Marshal(v.node()), nil }

// String returns the value's compact JSON text.
func (v Value) String() string { return string(jsonv.Marshal(v.node())) }

// UnmarshalJSON sets v to the JSON value in data, kept exactly. It parses as
// strictly as an event: no duplicate member names, nesting at most 1000
// deep. A [RunAgentInput] decoded with encoding/json thus keeps its state
// digit for digit.
func (v *Value) UnmarshalJSON(data []byte) error {
	n, err := jsonv.Parse(data, 0)
	if err != nil {
		return apiError(fmt.Errorf("%w: %w", errDecode, err))
	}
	v.n = n
	return nil
}

// Equal reports whether v and w are the same JSON value (RFC 6902 section
// 4.6). Numbers compare by exact value, so 1 equals 1.0; objects compare
// whatever their member order.
func (v Value) Equal(w Value) bool { return jsonv.Equal(v.node(), w.node()) }
