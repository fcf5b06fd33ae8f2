package aguistate

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Value is an immutable JSON value held by a [Consumer]: the state, or one
// message. It is any JSON value (the spec's Data Types section leaves State
// unconstrained), kept exactly as it arrived: numbers keep their digits and
// object members keep their order. A Value is safe to share between
// goroutines; the Consumer never changes it, it replaces it. The zero Value
// is JSON null.
type Value struct{ n *jsonv.Node }

func valueOf(n *jsonv.Node) Value { return Value{n: n} }

func (v Value) node() *jsonv.Node {
	if v.n == nil {
		return jsonv.NewNull()
	}
	return v.n
}

// MarshalJSON returns the value's compact JSON text (RFC 8259), byte for
// byte the same on every call. It never fails.
func (v Value) MarshalJSON() ([]byte, error) { return jsonv.Marshal(v.node()), nil }

// String returns the value's compact JSON text.
func (v Value) String() string { return string(jsonv.Marshal(v.node())) }

// UnmarshalJSON sets v to the JSON value in data, parsed as strictly as an
// event is (no duplicate member names, nesting at most 1000 deep) and kept
// exactly. A [RunAgentInput] decoded with encoding/json thus keeps its
// state digit for digit.
func (v *Value) UnmarshalJSON(data []byte) error {
	n, err := jsonv.Parse(data, 0)
	if err != nil {
		return apiError(fmt.Errorf("%w: %w", errDecode, err))
	}
	v.n = n
	return nil
}

// Equal reports whether v and w are the same JSON value in the sense of RFC
// 6902 section 4.6: numbers by exact decimal value, objects whatever their
// member order.
func (v Value) Equal(w Value) bool { return jsonv.Equal(v.node(), w.node()) }
