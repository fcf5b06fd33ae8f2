// Edits: persistent ones, which return a changed copy of a value and leave
// the value as it is, and batches of them.

package jsonv

import "github.com/aguistate/aguistate/internal/persist"

// Edit is one batch of edits of JSON values, such as one RFC 6902 patch.
// Every edit returns a new value and leaves the values it was given as they
// were, but the nodes a batch copies belong to it, and its later edits
// change them in place: a batch copies each node on its paths at most once.
// So a value the batch made may stand in one place only, until [Edit.Seal].
//
// A nil *Edit is valid: each edit is then a batch of its own.
type Edit struct {
	owner *persist.Owner
	work  int // bytes hashed and compared, and the steps taken
}

// stepWork is what one step down a container costs beyond hashing the name
// it looks for: finding the child in the nodes on its way, in bytes of
// node storage read.
const stepWork = 64

// NewEdit returns an Edit that owns nothing yet.
func NewEdit() *Edit { return &Edit{owner: persist.NewOwner()} }

// Seal makes every value the batch has made so far immutable. Call it
// before a value the batch made is put in a second place (an RFC 6902
// copy): later edits then copy it rather than change both places.
func (e *Edit) Seal() { e.owner.Seal() }

// Work returns what the batch has cost so far, in bytes: node storage
// copied or allocated, member names hashed, and a fixed cost for each step
// down a container. It grows with what the edits do, not with the size of
// the values around them.
func (e *Edit) Work() int { return e.work + e.owner.Copied() }

// Owner returns the persist.Owner of the batch, so that edits of other
// persistent containers can join it.
func (e *Edit) Owner() *persist.Owner { return e.own() }

func (e *Edit) own() *persist.Owner {
	if e == nil {
		return nil
	}
	return e.owner
}

func (e *Edit) charge(n int) {
	if e != nil {
		e.work += n
	}
}

// Update returns root with the value that tokens name (RFC 6901 section 4)
// replaced by what f returns for it. Where a token names nothing it fails
// as [Child] does, with the pointer of the tokens so far (see [At]), and it
// returns what f fails with. Each container on the way is copied, or
// changed in place when the batch owns it.
func (e *Edit) Update(root *Node, tokens []string, f func(*Node) (*Node, error)) (*Node, error) {
	return e.update(root, tokens, 0, f)
}

func (e *Edit) update(n *Node, tokens []string, i int, f func(*Node) (*Node, error)) (*Node, error) {
	if i == len(tokens) {
		return f(n)
	}
	if n.isPacked() {
		if next, ok, err := e.updatePacked(n, tokens[i:], f); ok {
			return next, err
		}
	}
	t := tokens[i]
	e.charge(stepWork + len(t))
	if n.meta&(kindMask|packedFlag) == uint64(Object) {
		// A tree object: the member is found and measured once (before
		// the edit, which may change in place nodes it shares), its copy
		// set on the way back up.
		pos, child := n.object().members.Find(t)
		if pos < 0 {
			_, _, err := Child(n, t)
			return nil, At(err, tokens[:i+1])
		}
		was := memberSummary(t, child)
		next, err := e.update(child, tokens, i+1, f)
		if err != nil {
			return nil, err
		}
		return e.setMember(n, pos, t, next, was), nil
	}
	child, pos, err := Child(n, t)
	if err != nil {
		return nil, At(err, tokens[:i+1])
	}
	if n.isPacked() {
		next, err := e.update(child, tokens, i+1, f)
		if err != nil {
			return nil, err
		}
		return e.SetAt(n, pos, next), nil
	}
	// A tree array (a tree object took the path above). The element is
	// measured before it is edited: the edit may change in place nodes
	// that it shares.
	was := elemMeasure{}.Of(child)
	next, err := e.update(child, tokens, i+1, f)
	if err != nil {
		return nil, err
	}
	return e.setChild(n, pos, t, next, was), nil
}

// Resolve returns the value that tokens name in root, as [Resolve] does,
// and counts the steps in the batch's work.
func (e *Edit) Resolve(root *Node, tokens []string) (*Node, error) {
	for _, t := range tokens {
		e.charge(stepWork + len(t))
	}
	return Resolve(root, tokens)
}

// SetAt returns container c with its element, or member, at position i, in
// [0, Len), set to v. A member keeps its name.
func (e *Edit) SetAt(c *Node, i int, v *Node) *Node {
	e.charge(stepWork)
	if c.isPacked() {
		sp := c.spanAt(i)
		if p := e.splice(c, sp.val, sp.end, v.Size(), c.packedCount(), -1, func(b []byte) []byte { return Append(b, v) }); p != nil {
			return p
		}
		c = unpack(c)
	}
	if c.Kind() == Array {
		return e.setChild(c, i, "", v, elemMeasure{}.Of(c.Elem(i)))
	}
	name, was := c.Member(i)
	return e.setChild(c, i, name, v, memberMeasure{}.Of(member{Key: name, Value: was}))
}

// setChild returns the tree container c with its child at position i,
// called name in an object and of summary was, replaced by v. Where the
// edit copies a flat container, the new node and its children are one
// allocation.
func (e *Edit) setChild(c *Node, i int, name string, v *Node, was summary) *Node {
	if c.Kind() == Array {
		s := c.array().elems
		pre := persist.SetIn[array](&s, e.own(), i, v, was, elemMeasure{}.Of(v))
		if pre == nil {
			return newArray(s)
		}
		pre.Node, pre.elems = header(Array, 0), s
		return &pre.Node
	}
	return e.setMember(c, i, name, v, was)
}

// setMember is setChild for the tree object c.
func (e *Edit) setMember(c *Node, i int, name string, v *Node, was summary) *Node {
	m := c.object().members
	pre := persist.SetAtIn[object](&m, e.own(), i, name, v, was, memberSummary(name, v))
	if pre == nil {
		return newObject(m, c.aux())
	}
	pre.Node, pre.members = *c, m
	return &pre.Node
}

// SetMember returns object o with the value of member name set to v:
// replaced where it is when o has it, appended otherwise, as RFC 6902
// "add" does and the JavaScript spread {...o, [name]: v}. It returns the
// value replaced too, or nil.
func (e *Edit) SetMember(o *Node, name string, v *Node) (*Node, *Node) {
	e.charge(stepWork + len(name))
	if o.isPacked() {
		if p, old, ok := e.setPacked(o, name, v); ok {
			return p, old
		}
		o = unpack(o)
	}
	m, old, had := o.object().members.Put(e.own(), name, v)
	if had {
		return newObject(m, o.aux()), old
	}
	return newObject(m, o.aux()+nameExtra(name)), nil
}

// RemoveMember returns object o without member name, and the member's
// value; or o and nil when o has no such member.
func (e *Edit) RemoveMember(o *Node, name string) (*Node, *Node) {
	e.charge(stepWork + len(name))
	if o.isPacked() {
		i, sp := o.findSpan(name)
		if i < 0 {
			return o, nil
		}
		_, old := o.childOf(sp)
		return e.cut(o, sp), old
	}
	m, old, ok := o.object().members.Delete(e.own(), name)
	if !ok {
		return o, nil
	}
	return newObject(m, o.aux()-nameExtra(name)), old
}

// InsertElem returns array a with v inserted before element i, in [0, Len];
// i = Len appends.
func (e *Edit) InsertElem(a *Node, i int, v *Node) *Node {
	e.charge(stepWork)
	if a.isPacked() {
		s, count := a.packedText(), a.packedCount()
		depth := max(a.packedDepth(), 1+v.Depth())
		var p *Node
		if i == count {
			p = e.splice(a, len(s)-1, len(s)-1, 1+v.Size(), count+1, depth, func(b []byte) []byte { return Append(append(b, ','), v) })
		} else {
			at := a.spanAt(i).val
			p = e.splice(a, at, at, v.Size()+1, count+1, depth, func(b []byte) []byte { return append(Append(b, v), ',') })
		}
		if p != nil {
			return p
		}
		a = unpack(a)
	}
	return newArray(a.array().elems.Insert(e.own(), i, v))
}

// RemoveElem returns array a without element i, in [0, Len), and that
// element.
func (e *Edit) RemoveElem(a *Node, i int) (*Node, *Node) {
	e.charge(stepWork)
	if a.isPacked() {
		sp := a.spanAt(i)
		_, old := a.childOf(sp)
		return e.cut(a, sp), old
	}
	s, old := a.array().elems.Delete(e.own(), i)
	return newArray(s), old
}

// WithMember returns a copy of object o with member name set to v: replaced
// in place when o has it, appended otherwise, as the JavaScript spread
// {...o, [name]: v} does.
func WithMember(o *Node, name string, v *Node) *Node {
	c, _ := (*Edit)(nil).SetMember(o, name, v)
	return c
}

// WithoutMember returns a copy of object o without member name, or o
// itself when it has no such member.
func WithoutMember(o *Node, name string) *Node {
	c, _ := (*Edit)(nil).RemoveMember(o, name)
	return c
}

// Merged returns a new object of the members of object o with those of
// object with set, as the JavaScript spread {...o, ...with} does: members
// o has keep their place and take the new value; the others go at the end
// in with's order. It costs O((n+m) log(n+m)) for n and m members: for
// merges too large to make member by member.
func Merged(o, with *Node) *Node {
	set := make(map[string]*Node, with.Len())
	for name, v := range with.Members() {
		set[name] = v
	}
	names := make([]string, 0, o.Len()+with.Len())
	vals := make([]*Node, 0, o.Len()+with.Len())
	for name, v := range o.Members() {
		if w, ok := set[name]; ok {
			v = w
			delete(set, name)
		}
		names, vals = append(names, name), append(vals, v)
	}
	for name, v := range with.Members() {
		if _, ok := set[name]; ok {
			names, vals = append(names, name), append(vals, v)
		}
	}
	return NewObject(names, vals)
}

// WithElem returns a copy of array a with element i (in range) set to v.
func WithElem(a *Node, i int, v *Node) *Node { return (*Edit)(nil).SetAt(a, i, v) }

// WithAppended returns a copy of array a with v added at the end.
func WithAppended(a *Node, v *Node) *Node { return (*Edit)(nil).InsertElem(a, a.Len(), v) }

// NewObjectOf returns an object of the members names[i]: vals[i] whose
// value is not nil, so that optional members can be listed in place. The
// names must be distinct.
func NewObjectOf(names []string, vals ...*Node) *Node {
	ns, vs := make([]string, 0, len(vals)), make([]*Node, 0, len(vals))
	for i, v := range vals {
		if v != nil {
			ns, vs = append(ns, names[i]), append(vs, v)
		}
	}
	return NewObject(ns, vs)
}

// setPacked returns the packed object o with member name set to v, as
// SetMember does, and the value replaced; or false when the result would
// be larger than packMax.
func (e *Edit) setPacked(o *Node, name string, v *Node) (*Node, *Node, bool) {
	write := func(b []byte) []byte { return Append(b, v) }
	if i, sp := o.findSpan(name); i >= 0 {
		_, old := o.childOf(sp)
		p := e.splice(o, sp.val, sp.end, v.Size(), o.packedCount(), -1, write)
		return p, old, p != nil
	}
	end := o.packedSize() - 1
	p := e.splice(o, end, end, 2+StringSize(name)+v.Size(), o.packedCount()+1, max(o.packedDepth(), 1+v.Depth()), func(b []byte) []byte {
		return write(append(AppendString(append(b, ','), name), ':'))
	})
	return p, nil, p != nil
}

// cut returns the packed container c without the child at sp.
func (e *Edit) cut(c *Node, sp span) *Node {
	from, to := sp.key, sp.end
	if c.packedText()[to] == ',' {
		to++ // the comma after it
	} else if from > 1 {
		from-- // the last child: the comma before it
	}
	return e.splice(c, from, to, 0, c.packedCount()-1, -1, func(b []byte) []byte { return b })
}

// updatePacked is update within the packed n: it finds the value that
// tokens name in n's text, and splices what f returns for it in its place.
// It reports false, having done nothing, where a token names nothing (so
// that update fails as Child does) or the result would not stay packed.
func (e *Edit) updatePacked(n *Node, tokens []string, f func(*Node) (*Node, error)) (*Node, bool, error) {
	from, to, ok := n.locate(tokens)
	if !ok {
		return nil, false, nil
	}
	for _, t := range tokens {
		e.charge(stepWork + len(t))
	}
	was := decodeValue(n.packedText()[from:to])
	next, err := f(was)
	if err != nil {
		return nil, true, err
	}
	depth := spliceDepth(n.packedDepth(), len(tokens), was.Depth(), next.Depth())
	if p := e.splice(n, from, to, next.Size(), n.packedCount(), depth, func(b []byte) []byte { return Append(b, next) }); p != nil {
		return p, true, nil
	}
	// Too large to stay packed: set the new value in the tree of n.
	v, err := e.update(unpack(n), tokens, 0, func(*Node) (*Node, error) { return next, nil })
	return v, true, err
}
