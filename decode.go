// Value.Decode: a strict decode of a part of a value into a Go value.

package aguistate

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Decode decodes the part of v that the JSON Pointer pointer names (RFC
// 6901; "" is the whole value) into dst, strictly. It is the way to
// validate remote writes into state before acting on them (spec, Security
// Considerations).
//
// dst is a non-nil pointer, and the value decodes as [json.Unmarshal]
// decodes it, with two differences:
//
//   - A member that names no field of its struct is an error, as with
//     [json.Decoder.DisallowUnknownFields]. [Value.DecodeLenient] ignores
//     it instead.
//   - A number decodes by its exact value, whatever its spelling, and only
//     when that value fits the Go type: never rounded, never cut. Into an
//     integer type, 25419.0, 1.5e3, 1E2 and -0.0 decode (as 25419, 1500,
//     100 and 0); 1.5 and 1e30 are errors. Into a float, 0.1 decodes (the
//     float's shortest decimal form has the number's exact value) and
//     9007199254740993 is an error. This holds for every integer and float
//     kind, wherever encoding/json makes one: struct fields, slices, maps
//     and, for floats, an interface{}. Decode into [json.Number] to keep
//     the text. Types with their own UnmarshalJSON or UnmarshalText, and
//     ",string" fields, see the text as sent and are not checked.
//
// Every error names the pointer. It may be a pointer that names nothing, a
// number that would be rounded (the error names its pointer), or an
// encoding/json error, kept in the chain for [errors.As]. After an error,
// do not use dst.
func (v Value) Decode(pointer string, dst any) error {
	return v.decodeAt(pointer, dst, true)
}

// DecodeLenient is [Value.Decode] but for members that name no field of
// their struct, which it ignores, as [json.Unmarshal] does. Use it to read
// the part of a state that a struct models while the agent adds members
// of its own; use Decode to refuse them. Numbers are checked as Decode
// checks them.
func (v Value) DecodeLenient(pointer string, dst any) error {
	return v.decodeAt(pointer, dst, false)
}

func (v Value) decodeAt(pointer string, dst any, strict bool) error {
	if err := v.decode(pointer, dst, strict); err != nil {
		return apiError(fmt.Errorf("%w %s: %w", errDecode, jsonv.Quote(pointer), err))
	}
	return nil
}

func (v Value) decode(pointer string, dst any, strict bool) error {
	tokens, err := jsonv.ParsePointer(pointer)
	if err != nil {
		return err
	}
	n, err := jsonv.Resolve(v.node(), tokens)
	if err != nil {
		return err
	}
	if n, err = checkNumbers(n, tokens, dst); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(jsonv.Marshal(n)))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		return err
	}
	var rest json.RawMessage
	if err := dec.Decode(&rest); err != io.EOF {
		return errors.New("data after the value")
	}
	return nil
}

// checkNumbers applies the number rule to n on its way into dst. It walks
// n together with the Go value (or, where there is none yet, the type) that
// encoding/json would decode it into. A number bound for a float must have
// the float's exact value, or it reports the first that would be rounded.
// A number bound for an integer whose exact value is an integer that fits
// is rewritten to its plain digits ("1.5e3" to "1500"), which encoding/json
// then reads; any other is left for encoding/json to refuse. Everything
// else, values of the wrong type for their destination included, is left
// to encoding/json. It returns n with those numbers rewritten.
func checkNumbers(n *jsonv.Node, tokens []string, dst any) (*jsonv.Node, error) {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return n, nil // encoding/json reports an InvalidUnmarshalError
	}
	w := numberWalker{path: slices.Clip(tokens), base: len(tokens)}
	return w.walk(n, rv.Type(), rv)
}

// numberWalker holds the reference tokens of the value being checked; the
// first base of them are the caller's pointer.
type numberWalker struct {
	path []string
	base int
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]()
)

// walk checks n against type t, and returns n with the numbers bound for
// integers rewritten. v is the Go value of type t that encoding/json would
// decode into, or the zero reflect.Value when that value does not exist yet
// (a nil pointer, a new map value, a slice element past the end); it
// matters only for interfaces holding pointers, which encoding/json decodes
// through.
func (w *numberWalker) walk(n *jsonv.Node, t reflect.Type, v reflect.Value) (*jsonv.Node, error) {
	if n.Kind() == jsonv.Null || t == numberType || unmarshals(t) {
		return n, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsValid() && !v.IsNil() {
			return w.walk(n, t.Elem(), v.Elem())
		}
		return w.walk(n, t.Elem(), reflect.Value{})
	case reflect.Interface:
		if v.IsValid() && !v.IsNil() {
			if e := v.Elem(); e.Kind() == reflect.Pointer && !e.IsNil() {
				return w.walk(n, e.Type(), e) // encoding/json decodes into it
			}
		}
		if t.NumMethod() > 0 {
			return n, nil // encoding/json cannot decode into it
		}
		return n, w.walkAny(n)
	case reflect.Float32, reflect.Float64:
		if n.Kind() == jsonv.Number {
			return n, w.checkNumber(n.Text(), t.Bits())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n.Kind() == jsonv.Number {
			return integerNumber(n, t), nil
		}
	case reflect.Struct:
		if n.Kind() == jsonv.Object {
			return w.walkStruct(n, t, v)
		}
	case reflect.Map:
		if n.Kind() == jsonv.Object {
			out := rebuild{n: n}
			for i := range n.Len() {
				name, val := n.Member(i)
				c, err := w.child(name, val, t.Elem(), reflect.Value{})
				if err != nil {
					return nil, err
				}
				out.set(i, c)
			}
			return out.node(), nil
		}
	case reflect.Slice, reflect.Array:
		if n.Kind() != jsonv.Array {
			return n, nil
		}
		out := rebuild{n: n}
		for i := range n.Len() {
			var ev reflect.Value
			switch {
			case t.Kind() == reflect.Array && i >= t.Len():
				return out.node(), nil // encoding/json drops the extra elements
			case v.IsValid() && i < v.Len():
				ev = v.Index(i)
			}
			c, err := w.child(strconv.Itoa(i), n.Elem(i), t.Elem(), ev)
			if err != nil {
				return nil, err
			}
			out.set(i, c)
		}
		return out.node(), nil
	}
	return n, nil
}

// integerNumber returns the number n for an integer of type t: its plain
// digits when its exact value is an integer that fits t, and n itself
// otherwise, for encoding/json to refuse with its own text.
func integerNumber(n *jsonv.Node, t reflect.Type) *jsonv.Node {
	text, ok := jsonv.IntegerText(n.Text(), 20) // 20 digits hold every uint64
	if !ok || text == n.Text() {
		return n
	}
	var err error
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr {
		_, err = strconv.ParseUint(text, 10, t.Bits())
	} else {
		_, err = strconv.ParseInt(text, 10, t.Bits())
	}
	if err != nil {
		return n
	}
	return jsonv.NewNumber(text)
}

// rebuild is a container being walked: it copies the container's children
// at the first one the walk rewrites, and only then.
type rebuild struct {
	n    *jsonv.Node
	vals []*jsonv.Node
}

// set records that child i of the container is now c.
func (r *rebuild) set(i int, c *jsonv.Node) {
	if r.vals == nil {
		if c == r.child(i) {
			return
		}
		r.vals = make([]*jsonv.Node, r.n.Len())
		for j := range r.vals {
			r.vals[j] = r.child(j)
		}
	}
	r.vals[i] = c
}

func (r *rebuild) child(i int) *jsonv.Node {
	if r.n.Kind() == jsonv.Array {
		return r.n.Elem(i)
	}
	_, v := r.n.Member(i)
	return v
}

// node returns the container with its rewritten children.
func (r *rebuild) node() *jsonv.Node {
	switch {
	case r.vals == nil:
		return r.n
	case r.n.Kind() == jsonv.Array:
		return jsonv.NewArray(r.vals)
	}
	names := make([]string, r.n.Len())
	for i := range names {
		names[i], _ = r.n.Member(i)
	}
	return jsonv.NewObject(names, r.vals)
}

// walkAny checks n as encoding/json decodes it into an empty interface:
// every number becomes a float64.
func (w *numberWalker) walkAny(n *jsonv.Node) error {
	switch n.Kind() {
	case jsonv.Number:
		return w.checkNumber(n.Text(), 64)
	case jsonv.Array:
		for i := range n.Len() {
			w.path = append(w.path, strconv.Itoa(i))
			err := w.walkAny(n.Elem(i))
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
	case jsonv.Object:
		for i := range n.Len() {
			name, val := n.Member(i)
			w.path = append(w.path, name)
			err := w.walkAny(val)
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// walkStruct checks each member of object n against the struct field that
// encoding/json decodes it into. Members that name no field are left to
// encoding/json, which rejects them.
func (w *numberWalker) walkStruct(n *jsonv.Node, t reflect.Type, v reflect.Value) (*jsonv.Node, error) {
	fields := cachedFields(t)
	out := rebuild{n: n}
	for i := range n.Len() {
		name, val := n.Member(i)
		f := fields.find(name)
		if f == nil || f.quoted {
			continue
		}
		var fv reflect.Value
		if v.IsValid() {
			fv, _ = v.FieldByIndexErr(f.index) // invalid through a nil embedded pointer
		}
		c, err := w.child(name, val, f.typ, fv)
		if err != nil {
			return nil, err
		}
		out.set(i, c)
	}
	return out.node(), nil
}

// child walks the value of member or element name of the current value.
func (w *numberWalker) child(name string, n *jsonv.Node, t reflect.Type, v reflect.Value) (*jsonv.Node, error) {
	w.path = append(w.path, name)
	c, err := w.walk(n, t, v)
	w.path = w.path[:len(w.path)-1]
	return c, err
}

// checkNumber reports whether the number literal lit survives the trip into
// a float of the given bits: the shortest decimal that the float prints as
// must have the literal's exact value. A literal out of the float's range is
// left to encoding/json, which rejects it.
func (w *numberWalker) checkNumber(lit string, bits int) error {
	f, err := strconv.ParseFloat(lit, bits)
	if err != nil {
		return nil
	}
	if jsonv.NumberEqual(lit, strconv.FormatFloat(f, 'g', -1, bits)) {
		return nil
	}
	// Show the float as encoding/json writes it: no exponent between 1e-6
	// and 1e21.
	format := byte('g')
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 || a == 0 {
		format = 'f'
	}
	err = fmt.Errorf("number %s does not fit a float%d exactly (it would become %s)",
		jsonv.Shorten(lit), bits, strconv.FormatFloat(f, format, -1, bits))
	if len(w.path) > w.base { // the number is inside the value the caller named
		err = jsonv.At(err, w.path)
	}
	return err
}

// unmarshals reports whether encoding/json hands values of type t (or *t,
// as it does for addressable values) to an UnmarshalJSON or UnmarshalText
// method, which then sees the text as sent.
func unmarshals(t reflect.Type) bool {
	if t.Kind() != reflect.Pointer {
		t = reflect.PointerTo(t)
	}
	return t.Implements(jsonUnmarshalerType) || t.Implements(textUnmarshalerType)
}

// structField is a field that encoding/json decodes an object member into.
type structField struct {
	name   string
	tagged bool  // name came from a json tag
	index  []int // for reflect.Value.FieldByIndex
	typ    reflect.Type
	quoted bool // the ",string" option applies
}

// structFields are a struct type's JSON fields, found as encoding/json
// finds them.
type structFields struct {
	list   []structField
	exact  map[string]int
	folded map[string]int
}

// find returns the field that encoding/json decodes a member called name
// into: the field with exactly that name, or else the first one whose name
// matches it case-insensitively. It returns nil when there is none.
func (fs *structFields) find(name string) *structField {
	if i, ok := fs.exact[name]; ok {
		return &fs.list[i]
	}
	if i, ok := fs.folded[foldName(name)]; ok {
		return &fs.list[i]
	}
	return nil
}

// foldName maps names that encoding/json matches case-insensitively to the
// same string.
func foldName(s string) string {
	return strings.Map(func(r rune) rune { return unicode.ToUpper(unicode.ToLower(r)) }, s)
}

var fieldCache sync.Map // reflect.Type -> *structFields

func cachedFields(t reflect.Type) *structFields {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(*structFields)
	}
	fs, _ := fieldCache.LoadOrStore(t, typeFields(t))
	return fs.(*structFields)
}

// typeFields lists the fields encoding/json decodes into for struct type t,
// following its rules: exported fields and the fields of embedded structs,
// breadth first; names from json tags or else the Go field name; "-"
// skipped; and, among fields with one name, the shallowest wins, then a
// tagged one, and two at the same depth with the same taggedness hide each
// other.
func typeFields(t reflect.Type) *structFields {
	type embedded struct {
		typ   reflect.Type
		index []int
	}
	var fields []structField
	next := []embedded{{typ: t}}
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count := map[reflect.Type]int{} // embeddings of each type at this depth
		for _, e := range current {
			count[e.typ]++
		}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTag(name) {
					name = ""
				}
				index := append(slices.Clip(e.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, embedded{typ: ft, index: index})
					continue
				}
				f := structField{name: name, tagged: name != "", index: index, typ: sf.Type,
					quoted: hasOption(opts, "string") && quotable(ft.Kind())}
				if f.name == "" {
					f.name = sf.Name
				}
				fields = append(fields, f)
				if count[e.typ] > 1 {
					fields = append(fields, f) // so that the duplicate hides both
				}
			}
		}
	}

	slices.SortFunc(fields, func(a, b structField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	var out []structField
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		if j-i == 1 || len(fields[i].index) != len(fields[i+1].index) || fields[i].tagged != fields[i+1].tagged {
			out = append(out, fields[i])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b structField) int { return slices.Compare(a.index, b.index) })

	fs := &structFields{list: out, exact: map[string]int{}, folded: map[string]int{}}
	for i, f := range out {
		fs.exact[f.name] = i
		if _, ok := fs.folded[foldName(f.name)]; !ok {
			fs.folded[foldName(f.name)] = i // the first folded match wins
		}
	}
	return fs
}

// validTag reports whether a json tag name is one encoding/json accepts.
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// quotable reports whether the ",string" option applies to a field of kind k.
func quotable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}
