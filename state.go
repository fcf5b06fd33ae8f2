package aguistate

import (
	"errors"
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
// exactly, so that a [RunAgentInput] decoded with encoding/json keeps its
// state digit for digit. It returns an error wrapping [ErrDecode].
func (v *Value) UnmarshalJSON(data []byte) error {
	n, err := jsonv.Parse(data, 0)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDecode, err)
	}
	v.n = n
	return nil
}

// Equal reports whether v and w are the same JSON value in the sense of RFC
// 6902 section 4.6: numbers by exact decimal value, objects whatever their
// member order.
func (v Value) Equal(w Value) bool { return jsonv.Equal(v.node(), w.node()) }

// stateSnapshot replaces the state wholesale, no merging (spec,
// STATE_SNAPSHOT), and ends any divergence.
func (t *txn) stateSnapshot(ev *jsonv.Node) error {
	f := eventFields(ev)
	snap := f.any("snapshot")
	if f.err != nil {
		return f.err
	}
	t.next.state, t.next.diverged = snap, false
	return nil
}

// stateDelta applies the event's RFC 6902 patch atomically (spec,
// STATE_DELTA and Error Handling): a malformed patch is fatal, one that
// fails to apply is a warning and changes nothing.
func (t *txn) stateDelta(ev *jsonv.Node) error {
	lim := t.opts.stateLimits()
	ops, err := decodePatch(ev.Get("delta"), lim)
	if err != nil {
		return err
	}
	state, err := applyPatch(t.next.state, ops, lim)
	if errors.Is(err, ErrLimit) {
		return err
	}
	if err != nil {
		t.warn, t.next.diverged = err, true
		return nil
	}
	t.next.state = state
	return nil
}
