// The RFC 6902 JSON Patch engine: decoding a patch, then applying it all or
// nothing.

package aguistate

import (
	"errors"
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// opKind is an RFC 6902 operation's "op" (RFC 6902 section 4).
type opKind uint8

const (
	opAdd opKind = iota
	opRemove
	opReplace
	opMove
	opCopy
	opTest
)

var opKinds = map[string]opKind{
	"add": opAdd, "remove": opRemove, "replace": opReplace,
	"move": opMove, "copy": opCopy, "test": opTest,
}

// operation is one decoded, structurally valid patch operation.
type operation struct {
	kind     opKind
	op       string // "op" as sent
	pathText string // "path" as sent, a JSON Pointer
	fromText string // "from" as sent, move and copy only
	value    *jsonv.Node
}

// decodePatch checks a whole patch before anything is applied (RFC 6902
// sections 3 and 4). Every failure wraps errMalformedPatch: the patch is not
// an array, an operation is not an object, "op" is missing, not a string or
// unknown, "path" (or "from" for move and copy) is missing, not a string or
// not a JSON Pointer, or "value" is missing for add, replace or test. Other
// members are ignored, as section 4 says.
//
// A patch of more than lim.ops operations fails with ErrLimit.
func decodePatch(patch *jsonv.Node, lim limits) ([]operation, error) {
	if patch == nil || patch.Kind() != jsonv.Array {
		return nil, fmt.Errorf("%w: the patch is not an array", errMalformedPatch)
	}
	if lim.ops > 0 && patch.Len() > lim.ops {
		return nil, fmt.Errorf("%w: the patch has %d operations, more than MaxPatchOps (%d)", ErrLimit, patch.Len(), lim.ops)
	}
	ops := make([]operation, patch.Len())
	for i, n := range patch.All() {
		if err := decodeOperation(n, &ops[i]); err != nil {
			return nil, &PatchError{Index: i, Op: ops[i].op, Path: ops[i].pathText, From: ops[i].fromText, Err: err}
		}
	}
	return ops, nil
}

func decodeOperation(n *jsonv.Node, o *operation) error {
	if n.Kind() != jsonv.Object {
		return fmt.Errorf("%w: the operation is %s, not an object", errMalformedPatch, n.Kind().Phrase())
	}
	// Keep what the operation names, for the error message, before checking it.
	o.pathText = textMember(n, "path")
	op := n.Get("op")
	if op == nil || op.Kind() != jsonv.String {
		return fmt.Errorf("%w: \"op\" is missing or not a string", errMalformedPatch)
	}
	o.op = op.Text()
	kind, ok := opKinds[o.op]
	if !ok {
		return fmt.Errorf("%w: unknown op %s", errMalformedPatch, jsonv.Quote(o.op))
	}
	o.kind = kind
	if kind == opMove || kind == opCopy {
		o.fromText = textMember(n, "from")
	}
	var err error
	if o.pathText, err = pointerMember(n, "path"); err != nil {
		return err
	}
	if kind == opMove || kind == opCopy {
		if o.fromText, err = pointerMember(n, "from"); err != nil {
			return err
		}
	}
	if kind == opAdd || kind == opReplace || kind == opTest {
		if o.value = n.Get("value"); o.value == nil {
			return fmt.Errorf("%w: \"value\" is missing", errMalformedPatch)
		}
	}
	return nil
}

// textMember returns the string member name of n, or "".
func textMember(n *jsonv.Node, name string) string {
	if v := n.Get(name); v != nil && v.Kind() == jsonv.String {
		return v.Text()
	}
	return ""
}

// pointerMember returns the member name of n, checked to be a JSON
// Pointer. It is split into tokens when the operation is applied (see
// [patcher.apply]).
func pointerMember(n *jsonv.Node, name string) (string, error) {
	v := n.Get(name)
	if v == nil || v.Kind() != jsonv.String {
		return "", fmt.Errorf("%w: %q is missing or not a string", errMalformedPatch, name)
	}
	if err := jsonv.CheckPointer(v.Text()); err != nil {
		return v.Text(), fmt.Errorf("%w: %q: %w", errMalformedPatch, name, err)
	}
	return v.Text(), nil
}

// applyPatch applies decoded operations to doc in order, all or none (RFC
// 6902 section 5). It never modifies doc: it returns a new document that
// shares every node the patch does not touch, or doc itself and a
// *PatchError wrapping ErrPatchFailed. A document that grows past lim.size
// bytes of JSON text or lim.depth levels of nesting after any operation
// fails with a *PatchError wrapping ErrLimit instead; checking after each
// operation keeps repeated copies from growing it without bound. So does a
// patch whose work passes lim.work (see [patcher.cost]).
func applyPatch(doc *jsonv.Node, ops []operation, lim limits) (*jsonv.Node, error) {
	next, _, err := patchState(doc, ops, lim)
	return next, err
}

// patchState is applyPatch that also reports whether the patch changed the
// document: whether an operation wrote a value other than the one it
// replaced (RFC 6902 section 4.6 equality), or added or removed one. A copy
// or move changes it unless it puts a value back where it was.
func patchState(doc *jsonv.Node, ops []operation, lim limits) (*jsonv.Node, bool, error) {
	p := patcher{edit: jsonv.NewEdit(), root: doc}
	for i := range ops {
		o := &ops[i]
		p.work += opWork
		err := p.apply(o)
		switch {
		case err != nil:
			err = fmt.Errorf("%w: %w", ErrPatchFailed, err)
		case lim.work > 0 && p.cost() > lim.work:
			err = fmt.Errorf("%w: the patch would cost more than %d bytes of work (copied, hashed and compared)", ErrLimit, lim.work)
		default:
			err = lim.check("the document", p.root)
		}
		if err != nil {
			return doc, false, &PatchError{Index: i, Op: o.op, Path: o.pathText, From: o.fromText, Err: err}
		}
	}
	return p.root, p.changed, nil
}

// opWork is what an operation costs, in bytes of work, beyond the steps of
// its paths: decoding it, checking the limits.
const opWork = 256

// patcher builds the new document as one [jsonv.Edit] batch: a container it
// has copied is changed in place by later operations of the same patch, so
// a long patch copies each node on its paths once, not once per operation.
type patcher struct {
	edit    *jsonv.Edit
	root    *jsonv.Node
	work    int  // bytes compared, and the fixed cost of each operation
	changed bool // an operation changed the document
}

// cost is the work of the patch so far, in bytes: what its edits copied and
// hashed, what it compared, and a fixed cost for each operation and each
// step down a container. Most of it grows with the patch's own text; what
// the budget is for is the rest: the copies (each copy operation seals the
// batch, after which the next edits copy their paths again) and long
// numbers of the document compared by tests.
func (p *patcher) cost() int { return p.work + p.edit.Work() }

// stackTokens is how many reference tokens of an operation's pointers
// [patcher.apply] keeps on its stack; longer pointers take an allocation.
const stackTokens = 128

func (p *patcher) apply(o *operation) error {
	// The tokens of both pointers share one array on the stack: a deep
	// path costs no allocation, nor garbage to collect. decodeOperation
	// checked both pointers.
	var buf [stackTokens]string
	tokens, _ := jsonv.AppendTokens(buf[:0], o.fromText)
	nf := len(tokens)
	tokens, _ = jsonv.AppendTokens(tokens, o.pathText)
	from, path := tokens[:nf:nf], tokens[nf:]
	switch o.kind {
	case opAdd:
		return p.add(path, o.value, false)
	case opRemove:
		_, err := p.remove(path)
		return err
	case opReplace:
		return p.replace(path, o.value)
	case opTest:
		v, err := p.resolve(path)
		if err != nil {
			return err
		}
		p.work += compareWork(v, o.value)
		if !jsonv.Equal(v, o.value) {
			return fmt.Errorf("test failed: the value at %s is not equal to \"value\"", jsonv.Quote(o.pathText))
		}
		return nil
	case opMove:
		if isProperPrefix(from, path) {
			return fmt.Errorf("\"from\" %s is a proper prefix of \"path\"", jsonv.Quote(o.fromText))
		}
		if len(from) == len(path) && isProperPrefixOrEqual(from, path) {
			_, err := p.resolve(from) // moving a value onto itself changes nothing
			return err
		}
		v, err := p.remove(from)
		if err != nil {
			return err
		}
		return p.add(path, v, true)
	default: // opCopy
		v, err := p.resolve(from)
		if err != nil {
			return err
		}
		// v is about to be in two places. Seal everything this patch has
		// built so far, before the add: otherwise the add could edit in place
		// a container that v is or holds, putting v inside itself, and no
		// later operation may change both copies through one edit.
		p.edit.Seal()
		return p.add(path, v, true)
	}
}

// resolve returns the value that tokens name, counting the steps.
func (p *patcher) resolve(tokens []string) (*jsonv.Node, error) {
	return p.edit.Resolve(p.root, tokens)
}

// compareWork bounds what comparing a and b costs, in bytes: the smaller
// side, but two numbers are read whole.
func compareWork(a, b *jsonv.Node) int {
	if a.Kind() == jsonv.Number && b.Kind() == jsonv.Number {
		return a.Size() + b.Size()
	}
	return min(a.Size(), b.Size())
}

// wrote records that an operation put v where old was (nil for nothing). A
// value of the patch changes the document unless it equals old; a value
// moved or copied from the document unless it is old itself.
func (p *patcher) wrote(old, v *jsonv.Node, fromDoc bool) {
	switch {
	case p.changed:
	case old == nil || fromDoc:
		p.changed = old == nil || !jsonv.Same(old, v)
	default:
		p.work += compareWork(old, v)
		p.changed = !jsonv.Equal(old, v)
	}
}

// editAt lets fn change the container c that holds the target of tokens,
// whose last reference token is t, and puts the result in place.
func (p *patcher) editAt(tokens []string, fn func(c *jsonv.Node, t string) (*jsonv.Node, error)) error {
	parent := tokens[:len(tokens)-1]
	root, err := p.edit.Update(p.root, parent, func(c *jsonv.Node) (*jsonv.Node, error) {
		if k := c.Kind(); k != jsonv.Object && k != jsonv.Array {
			if len(parent) == 0 {
				return nil, fmt.Errorf("the whole document is %s, not an object or array", k.Phrase())
			}
			return nil, fmt.Errorf("the parent %s is %s, not an object or array", jsonv.Quote(jsonv.FormatPointer(parent)), k.Phrase())
		}
		return fn(c, tokens[len(tokens)-1])
	})
	if err != nil {
		return err
	}
	p.root = root
	return nil
}

// add implements RFC 6902 section 4.1. fromDoc tells that v comes from the
// document (move, copy) rather than from the patch.
func (p *patcher) add(tokens []string, v *jsonv.Node, fromDoc bool) error {
	if len(tokens) == 0 {
		p.wrote(p.root, v, fromDoc)
		p.root = v
		return nil
	}
	return p.editAt(tokens, func(c *jsonv.Node, t string) (*jsonv.Node, error) {
		if c.Kind() == jsonv.Object {
			c, old := p.edit.SetMember(c, t, v)
			p.wrote(old, v, fromDoc)
			return c, nil
		}
		i, err := jsonv.InsertIndex(c, t)
		if err != nil {
			return nil, jsonv.At(err, tokens)
		}
		p.wrote(nil, v, fromDoc)
		return p.edit.InsertElem(c, i, v), nil
	})
}

// remove implements RFC 6902 section 4.2 and returns the removed value.
func (p *patcher) remove(tokens []string) (removed *jsonv.Node, err error) {
	if len(tokens) == 0 {
		return nil, errors.New("the whole document cannot be removed")
	}
	err = p.editAt(tokens, func(c *jsonv.Node, t string) (*jsonv.Node, error) {
		if c.Kind() == jsonv.Object {
			c, removed = p.edit.RemoveMember(c, t)
		} else if i, err := jsonv.ElemIndex(c, t); err == nil {
			c, removed = p.edit.RemoveElem(c, i)
		}
		if removed == nil {
			_, _, err := jsonv.Child(c, t)
			return nil, jsonv.At(err, tokens)
		}
		p.changed = true
		return c, nil
	})
	return removed, err
}

// replace implements RFC 6902 section 4.3: the target must exist, and an
// object member keeps its position.
func (p *patcher) replace(tokens []string, v *jsonv.Node) error {
	if len(tokens) == 0 {
		p.wrote(p.root, v, false)
		p.root = v
		return nil
	}
	return p.editAt(tokens, func(c *jsonv.Node, t string) (*jsonv.Node, error) {
		old, i, err := jsonv.Child(c, t)
		if err != nil {
			return nil, jsonv.At(err, tokens)
		}
		p.wrote(old, v, false)
		return p.edit.SetAt(c, i, v), nil
	})
}

// isProperPrefix reports whether a names a proper ancestor of b (RFC 6902
// section 4.4: a location cannot be moved into one of its children).
func isProperPrefix(a, b []string) bool {
	return len(a) < len(b) && isProperPrefixOrEqual(a, b)
}

func isProperPrefixOrEqual(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
