// Persistent edits: functions that return a changed copy of a value and
// leave the value itself as it is.

package jsonv

// WithMember returns a copy of object o with member name set to v: replaced
// in place when o has it, appended otherwise, as the JavaScript spread
// {...o, [name]: v} does.
func WithMember(o *Node, name string, v *Node) *Node {
	c := o.Owned(NewGen())
	if i := c.Lookup(name); i >= 0 {
		c.SetMember(i, v)
	} else {
		c.AddMember(name, v)
	}
	return c
}

// WithoutMember returns a copy of object o without member name, or o
// itself when it has no such member.
func WithoutMember(o *Node, name string) *Node {
	i := o.Lookup(name)
	if i < 0 {
		return o
	}
	c := o.Owned(NewGen())
	c.RemoveMember(i)
	return c
}

// Merged returns a copy of object o with every member of object with set,
// as the JavaScript spread {...o, ...with} does: members o has keep their
// place and take the new value; the others go at the end in with's order.
func Merged(o, with *Node) *Node {
	if with.Len() == 0 {
		return o
	}
	c := o.Owned(NewGen())
	for i := range with.Len() {
		name, v := with.Member(i)
		if j := c.Lookup(name); j >= 0 {
			c.SetMember(j, v)
		} else {
			c.AddMember(name, v)
		}
	}
	return c
}

// WithElem returns a copy of array a with element i (in range) set to v.
func WithElem(a *Node, i int, v *Node) *Node {
	c := a.Owned(NewGen())
	c.SetElem(i, v)
	return c
}

// WithAppended returns a copy of array a with v added at the end.
func WithAppended(a *Node, v *Node) *Node {
	c := a.Owned(NewGen())
	c.InsertElem(c.Len(), v)
	return c
}

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
