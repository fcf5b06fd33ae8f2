// The member reader event handlers use: required and optional members of a
// kind, and the first failure.

package aguistate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// fields reads the members of an event object (or of a checkpoint) and
// keeps the first failure, so that a handler reads all it needs and checks
// once. Every failure wraps kind: ErrMalformedEvent for an event,
// errBadCheckpoint for a checkpoint. A member that fails reads as an empty
// value of the kind asked for.
type fields struct {
	n    *jsonv.Node
	kind error
	err  error
}

// eventFields reads an event's members; failures wrap ErrMalformedEvent.
func eventFields(ev *jsonv.Node) *fields { return &fields{n: ev, kind: ErrMalformedEvent} }

func (f *fields) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("%w: %s", f.kind, fmt.Sprintf(format, args...))
	}
}

// empty is the stand-in for a member of the given kind that failed.
func empty(kind jsonv.Kind) *jsonv.Node {
	switch kind {
	case jsonv.String:
		return jsonv.NewString("")
	case jsonv.Object:
		return jsonv.NewObject(nil, nil)
	case jsonv.Array:
		return jsonv.NewArray(nil)
	}
	return jsonv.NewNull()
}

// any returns the required member name, of any kind.
func (f *fields) any(name string) *jsonv.Node {
	v := f.n.Get(name)
	if v == nil {
		f.fail("%q is missing", name)
		return jsonv.NewNull()
	}
	return v
}

// of returns the required member name, which must be one of kinds (the
// first is the stand-in's kind).
func (f *fields) of(name string, kinds ...jsonv.Kind) *jsonv.Node {
	v := f.n.Get(name)
	if v != nil {
		for _, k := range kinds {
			if v.Kind() == k {
				return v
			}
		}
	}
	f.fail("%q is missing or not %s", name, kindList(kinds))
	return empty(kinds[0])
}

// str returns the required string member name.
func (f *fields) str(name string) string { return f.of(name, jsonv.String).Text() }

// id returns the required id member name (messageId, toolCallId, ...): a
// non-empty string.
func (f *fields) id(name string) string {
	s := f.str(name)
	if s == "" {
		f.fail("%q is empty", name)
	}
	return s
}

// opt returns the optional member name, or nil when it is absent or null;
// any other kind than kind fails.
func (f *fields) opt(name string, kind jsonv.Kind) *jsonv.Node {
	v := f.n.Get(name)
	if v == nil || v.Kind() == jsonv.Null {
		return nil
	}
	if v.Kind() != kind {
		f.fail("%q is %s, not %s", name, v.Kind().Phrase(), kindList([]jsonv.Kind{kind}))
		return nil
	}
	return v
}

// optStr returns the optional string member name and whether it is there.
func (f *fields) optStr(name string) (string, bool) {
	v := f.opt(name, jsonv.String)
	if v == nil {
		return "", false
	}
	return v.Text(), true
}

// optID is optStr for an id member, which must not be empty.
func (f *fields) optID(name string) (string, bool) {
	s, ok := f.optStr(name)
	if ok && s == "" {
		f.fail("%q is empty", name)
		return "", false
	}
	return s, ok
}

// optBool returns the optional boolean member name, or def.
func (f *fields) optBool(name string, def bool) bool {
	v := f.n.Get(name)
	switch {
	case v == nil || v.Kind() == jsonv.Null:
		return def
	case v.Kind() == jsonv.True || v.Kind() == jsonv.False:
		return v.Kind() == jsonv.True
	}
	f.fail("%q is %s, not a boolean", name, v.Kind().Phrase())
	return def
}

// meta returns the event's optional "metadata" object, or nil.
func (f *fields) meta() *jsonv.Node { return f.opt("metadata", jsonv.Object) }

// kindList names kinds for a message: "a string", "an object or a
// boolean". True and False are both "a boolean", named once.
func kindList(kinds []jsonv.Kind) string {
	var names []string
	for _, k := range kinds {
		if p := k.Phrase(); !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	return strings.Join(names, " or ")
}
