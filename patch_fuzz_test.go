package aguistate

import (
	"errors"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// evanphx applies a patch with github.com/evanphx/json-patch/v5, the test
// oracle, recovering its panics. ok is false when it panicked.
func evanphx(doc, patch []byte) (out []byte, err error, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, err, true
	}
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false // RFC 6901: indexes are digits only
	opts.EscapeHTML = false
	out, err = p.ApplyWithOptions(doc, opts)
	return out, err, true
}

// evanphxConformant reports whether evanphx is RFC-conformant on this
// document and patch, by excluding each place where it is known not to be
// (the README lists them with the RFC clause that decides):
//   - it cannot patch a document that is not an object or array;
//   - "test" compares numbers as text, treats a missing member as null, and
//     panics on arrays holding null: tests are compared only on strings,
//     booleans and containers of them;
//   - it accepts "01" and "+1" as array indexes, so every token that is not
//     a plain member name or a canonical index is excluded;
//   - it lets a value move into its own child, and treats "/" as the root,
//     so empty reference tokens and move from a proper prefix are excluded;
//   - it replaces a whole document on "add" or "replace" at "" only for
//     containers, and fails "remove" at "" differently: root ops are excluded.
func evanphxConformant(doc *jsonv.Node, ops []operation) bool {
	if k := doc.Kind(); k != jsonv.Object && k != jsonv.Array {
		return false
	}
	for _, o := range ops {
		if len(o.path) == 0 || ((o.kind == opMove || o.kind == opCopy) && len(o.from) == 0) {
			return false
		}
		for _, t := range append(append([]string(nil), o.path...), o.from...) {
			if t == "" || (t[0] >= '0' && t[0] <= '9' && !jsonv.IsArrayIndex(t)) || t[0] == '+' || (t[0] == '-' && t != "-") {
				return false
			}
		}
		if o.kind == opMove && isProperPrefix(o.from, o.path) {
			return false
		}
		if o.kind == opTest && !plainValue(o.value) {
			return false
		}
	}
	return true
}

// plainValue reports whether n holds no number and no null.
func plainValue(n *jsonv.Node) bool {
	switch n.Kind() {
	case jsonv.Number, jsonv.Null:
		return false
	case jsonv.Array:
		for _, e := range n.Elems() {
			if !plainValue(e) {
				return false
			}
		}
	case jsonv.Object:
		for i := range n.Len() {
			if _, v := n.Member(i); !plainValue(v) {
				return false
			}
		}
	}
	return true
}

// FuzzApplyPatch feeds documents and patches to the engine. It requires that
// nothing panics, that every error is a *PatchError wrapping one of our
// sentinels, that a failed patch leaves the document untouched, and, where
// evanphx/json-patch is RFC-conformant, the same outcome as evanphx.
func FuzzApplyPatch(f *testing.F) {
	seeds := [][2]string{
		{`{"a":1,"b":[1,2,{"c":"x"}]}`, `[{"op":"add","path":"/b/1","value":{"d":true}}]`},
		{`{"a":{"b":{}}}`, `[{"op":"move","from":"/a/b","path":"/c"},{"op":"remove","path":"/a"}]`},
		{`[1,2,3]`, `[{"op":"copy","from":"/0","path":"/-"},{"op":"test","path":"/3","value":1}]`},
		{`{"x":"y"}`, `[{"op":"replace","path":"/x","value":["z"]},{"op":"test","path":"/x","value":["z"]}]`},
		{`{"a":[]}`, `[{"op":"add","path":"/a/0","value":1},{"op":"add","path":"/a/5","value":1}]`},
		{`1`, `[{"op":"replace","path":"","value":{}}]`},
		{`{"a":1}`, `[{"op":"move","from":"/a","path":"/a/b"}]`},
		{`{"a":[1]}`, `[{"op":"remove","path":"/a/01"}]`},
		{`{"k":{}}`, `[{"op":"add","path":"/k/a","value":1},{"op":"copy","from":"/k","path":"/k/z"}]`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, docText, patchText []byte) {
		doc, err := jsonv.Parse(docText, 0)
		if err != nil {
			return
		}
		patch, err := jsonv.Parse(patchText, 0)
		if err != nil {
			return
		}
		before := string(jsonv.Marshal(doc))
		ops, err := decodePatch(patch, limits{})
		var got *jsonv.Node
		if err == nil {
			got, err = applyPatch(doc, ops, limits{})
		}
		if err != nil {
			var pe *PatchError
			if !errors.As(err, &pe) && !errors.Is(err, ErrMalformedPatch) {
				t.Fatalf("error is not ours: %v", err)
			}
			if !errors.Is(err, ErrMalformedPatch) && !errors.Is(err, ErrPatchFailed) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
		}
		if after := string(jsonv.Marshal(doc)); after != before {
			t.Fatalf("the input document changed: %s -> %s", before, after)
		}
		if err == nil {
			if size := len(jsonv.Marshal(got)); got.Size() != size {
				t.Fatalf("cached size %d, encoded size %d", got.Size(), size)
			}
			if d := depthOf(got); got.Depth() != d {
				t.Fatalf("cached depth %d, real depth %d", got.Depth(), d)
			}
		}
		if ops == nil || !evanphxConformant(doc, ops) {
			return
		}
		// evanphx reads a document's type from its first byte, so it gets
		// our compact text rather than the fuzzer's.
		want, werr, ok := evanphx([]byte(before), jsonv.Marshal(patch))
		if !ok {
			return // evanphx panicked on input we accept: a known weakness
		}
		switch {
		case err != nil && werr == nil:
			t.Fatalf("we fail, evanphx gives %s: %v", want, err)
		case err == nil && werr != nil:
			t.Fatalf("we give %s, evanphx fails: %v", jsonv.Marshal(got), werr)
		case err == nil:
			w, perr := jsonv.Parse(want, 0)
			if perr != nil {
				t.Fatalf("evanphx output %q: %v", want, perr)
			}
			if !jsonv.Equal(w, got) {
				t.Fatalf("results differ:\n ours: %s\n evanphx: %s", jsonv.Marshal(got), want)
			}
		}
	})
}

// depthOf measures a value's nesting depth the slow way.
func depthOf(n *jsonv.Node) int {
	d := 0
	switch n.Kind() {
	case jsonv.Array:
		for _, e := range n.Elems() {
			d = max(d, depthOf(e))
		}
		return d + 1
	case jsonv.Object:
		for i := range n.Len() {
			_, v := n.Member(i)
			d = max(d, depthOf(v))
		}
		return d + 1
	}
	return 0
}
