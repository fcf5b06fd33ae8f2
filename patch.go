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
	op       string   // "op" as sent
	pathText string   // "path" as sent
	fromText string   // "from" as sent, move and copy only
	path     []string // reference tokens of path
	from     []string // reference tokens of from
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
	if o.pathText, o.path, err = pointerMember(n, "path"); err != nil {
		return err
	}
	if kind == opMove || kind == opCopy {
		if o.fromText, o.from, err = pointerMember(n, "from"); err != nil {
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

func pointerMember(n *jsonv.Node, name string) (string, []string, error) {
	v := n.Get(name)
	if v == nil || v.Kind() != jsonv.String {
		return "", nil, fmt.Errorf("%w: %q is missing or not a string", errMalformedPatch, name)
	}
	tokens, err := jsonv.ParsePointer(v.Text())
	if err != nil {
		return v.Text(), nil, fmt.Errorf("%w: %q: %w", errMalformedPatch, name, err)
	}
	return v.Text(), tokens, nil
}

// applyPatch applies decoded operations to doc in order, all or none (RFC
// 6902 section 5). It never modifies doc: it returns a new document that
// shares every container the patch does not touch, or doc itself and a
// *PatchError wrapping ErrPatchFailed. A document that grows past lim.size
// bytes of JSON text or lim.depth levels of nesting after any operation
// fails with a *PatchError wrapping ErrLimit instead; checking after each
// operation keeps repeated copies from growing it without bound.
func applyPatch(doc *jsonv.Node, ops []operation, lim limits) (*jsonv.Node, error) {
	p := patcher{gen: jsonv.NewGen(), root: doc}
	for i := range ops {
		o := &ops[i]
		err := p.apply(o)
		switch {
		case err != nil:
			err = fmt.Errorf("%w: %w", ErrPatchFailed, err)
		case lim.work > 0 && p.work > lim.work:
			err = fmt.Errorf("%w: the patch would move or copy more than %d members and elements in all", ErrLimit, lim.work)
		default:
			err = lim.check("the document", p.root)
		}
		if err != nil {
			return doc, &PatchError{Index: i, Op: o.op, Path: o.pathText, From: o.fromText, Err: err}
		}
	}
	return p.root, nil
}

// patcher builds the new document. Containers it has copied carry its
// generation and are edited in place by later operations of the same patch,
// so a long patch copies each container on its paths once, not once per
// operation.
type patcher struct {
	gen  uint64
	root *jsonv.Node
	path []step
	work int // elements, members and index entries moved or copied so far
}

func (p *patcher) apply(o *operation) error {
	switch o.kind {
	case opAdd:
		return p.add(o.path, o.value)
	case opRemove:
		_, err := p.remove(o.path)
		return err
	case opReplace:
		return p.replace(o.path, o.value)
	case opTest:
		v, err := jsonv.Resolve(p.root, o.path)
		if err != nil {
			return err
		}
		// What comparing may cost: the smaller side, bar a number, whose
		// literal is read whole.
		p.work += o.value.Size()
		if v.Kind() == jsonv.Number {
			p.work += v.Size()
		}
		if !jsonv.Equal(v, o.value) {
			return fmt.Errorf("test failed: the value at %s is not equal to \"value\"", jsonv.Quote(o.pathText))
		}
		return nil
	case opMove:
		if isProperPrefix(o.from, o.path) {
			return fmt.Errorf("\"from\" %s is a proper prefix of \"path\"", jsonv.Quote(o.fromText))
		}
		if len(o.from) == len(o.path) && isProperPrefixOrEqual(o.from, o.path) {
			_, err := jsonv.Resolve(p.root, o.from) // moving a value onto itself changes nothing
			return err
		}
		v, err := p.remove(o.from)
		if err != nil {
			return err
		}
		return p.add(o.path, v)
	default: // opCopy
		v, err := jsonv.Resolve(p.root, o.from)
		if err != nil {
			return err
		}
		// v is about to be in two places. Freeze everything this patch has
		// built so far, before the add: otherwise the add could edit in place
		// a container that v is or holds, putting v inside itself, and no
		// later operation may change both copies through one edit.
		p.gen = jsonv.NewGen()
		return p.add(o.path, v)
	}
}

// parent makes every container from the root down to the parent of the
// target of tokens owned by this patch, and returns that parent. It records
// the way down, so that [patcher.done] can bring the sizes and depths of
// the containers on it up to date after the parent is edited.
func (p *patcher) parent(tokens []string) (*jsonv.Node, error) {
	p.root = p.own(p.root)
	p.path = p.path[:0]
	cur := p.root
	for i, t := range tokens[:len(tokens)-1] {
		next, pos, err := jsonv.Child(cur, t)
		if err != nil {
			return nil, jsonv.At(err, tokens[:i+1])
		}
		owned := p.own(next)
		if owned != next {
			if cur.Kind() == jsonv.Object {
				cur.SetMember(pos, owned)
			} else {
				cur.SetElem(pos, owned)
			}
		}
		p.path = append(p.path, step{cur, pos, owned.Size(), owned.Depth()})
		cur = owned
	}
	if k := cur.Kind(); k != jsonv.Object && k != jsonv.Array {
		return nil, fmt.Errorf("the parent %s is %s, not a container", jsonv.Quote(jsonv.FormatPointer(tokens[:len(tokens)-1])), k.Phrase())
	}
	return cur, nil
}

// own returns n, or a copy of it that this patch may edit, counting the
// copy's work.
func (p *patcher) own(n *jsonv.Node) *jsonv.Node {
	owned := n.Owned(p.gen)
	if owned != n {
		p.work += n.Len()
	}
	return owned
}

// step is one container on the way down to an edit: its child at pos had
// size and depth before the edit.
type step struct {
	node        *jsonv.Node
	pos         int
	size, depth int
}

// done updates the sizes and depths on the way down to the last edit,
// from the bottom up.
func (p *patcher) done() {
	for i := len(p.path) - 1; i >= 0; i-- {
		s := p.path[i]
		p.work += s.node.ChildChanged(s.pos, s.size, s.depth)
	}
}

// edit lets fn change the parent c of the target of tokens, whose last
// reference token is t, and then brings the sizes and depths on the way
// down up to date.
func (p *patcher) edit(tokens []string, fn func(c *jsonv.Node, t string) error) error {
	c, err := p.parent(tokens)
	if err != nil {
		return err
	}
	if err := fn(c, tokens[len(tokens)-1]); err != nil {
		return err
	}
	p.done()
	return nil
}

// add implements RFC 6902 section 4.1.
func (p *patcher) add(tokens []string, v *jsonv.Node) error {
	if len(tokens) == 0 {
		p.root = v
		return nil
	}
	return p.edit(tokens, func(c *jsonv.Node, t string) error {
		if c.Kind() == jsonv.Object {
			if i := c.Lookup(t); i >= 0 {
				p.work += c.SetMember(i, v)
			} else {
				p.work += c.AddMember(t, v)
			}
			return nil
		}
		i, err := jsonv.InsertIndex(c, t)
		if err != nil {
			return jsonv.At(err, tokens)
		}
		p.work += c.InsertElem(i, v)
		return nil
	})
}

// remove implements RFC 6902 section 4.2 and returns the removed value.
func (p *patcher) remove(tokens []string) (removed *jsonv.Node, err error) {
	if len(tokens) == 0 {
		return nil, errors.New("the whole document cannot be removed")
	}
	err = p.edit(tokens, func(c *jsonv.Node, t string) error {
		v, i, err := jsonv.Child(c, t)
		if err != nil {
			return jsonv.At(err, tokens)
		}
		removed = v
		if c.Kind() == jsonv.Object {
			p.work += c.RemoveMember(i)
		} else {
			p.work += c.RemoveElem(i)
		}
		return nil
	})
	return removed, err
}

// replace implements RFC 6902 section 4.3: the target must exist, and an
// object member keeps its position.
func (p *patcher) replace(tokens []string, v *jsonv.Node) error {
	if len(tokens) == 0 {
		p.root = v
		return nil
	}
	return p.edit(tokens, func(c *jsonv.Node, t string) error {
		_, i, err := jsonv.Child(c, t)
		if err != nil {
			return jsonv.At(err, tokens)
		}
		if c.Kind() == jsonv.Object {
			p.work += c.SetMember(i, v)
		} else {
			p.work += c.SetElem(i, v)
		}
		return nil
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
