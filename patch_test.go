// Tests of the patch engine: table tests, sharing, cycles, errors, the RFC
// 6902 conformance suite, FuzzApplyPatch against evanphx.

package aguistate

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// applyText decodes and applies a patch to a document, both as JSON text.
func applyText(t testing.TB, doc, patch string) (*jsonv.Node, error) {
	t.Helper()
	ops, err := decodePatch(mustParse(t, patch), limits{})
	if err != nil {
		return nil, err
	}
	return applyPatch(mustParse(t, doc), ops, limits{})
}

func TestApplyPatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc, patch, want string
		reason                 string
	}{
		{"replace scalar root", `1`, `[{"op":"replace","path":"","value":2}]`, `2`, `"" is the whole document whatever its type`},
		{"add to null root", `null`, `[{"op":"add","path":"","value":{"a":1}}]`, `{"a":1}`, "RFC 6902 4.1: add at the root replaces it"},
		{"test scalar root", `"x"`, `[{"op":"test","path":"","value":"x"}]`, `"x"`, "test the whole document"},
		{"copy root", `{"a":1}`, `[{"op":"copy","from":"","path":"/b"}]`, `{"a":1,"b":{"a":1}}`, "copy from the whole document"},
		{"slash is empty member", `{"":1}`, `[{"op":"replace","path":"/","value":2}]`, `{"":2}`, `"/" names the member ""`},
		{"add new member goes last", `{"b":1,"a":2}`, `[{"op":"add","path":"/0","value":3}]`, `{"b":1,"a":2,"0":3}`, "member order is arrival order"},
		{"add existing keeps position", `{"a":1,"b":2}`, `[{"op":"add","path":"/a","value":9}]`, `{"a":9,"b":2}`, "RFC 6902 4.1: an existing member's value is replaced"},
		{"test numeric equality", `{"n":1}`, `[{"op":"test","path":"/n","value":1.0},{"op":"test","path":"/n","value":10e-1}]`, `{"n":1}`, "RFC 6902 4.6: numbers equal by value"},
		{"test null in array", `[null,1]`, `[{"op":"test","path":"","value":[null,1]}]`, `[null,1]`, "arrays holding null compare"},
		{"test object order", `{"a":1,"b":2}`, `[{"op":"test","path":"","value":{"b":2,"a":1}}]`, `{"a":1,"b":2}`, "objects regardless of member order"},
		{"exact big number", `{"n":12345678901234567890}`, `[{"op":"test","path":"/n","value":12345678901234567890}]`, `{"n":12345678901234567890}`, "no float64 rounding"},
		{"insert at index", `[1,3]`, `[{"op":"add","path":"/1","value":2}]`, `[1,2,3]`, "RFC 6902 4.1: insert shifts elements"},
		{"append with dash", `[1]`, `[{"op":"add","path":"/-","value":2}]`, `[1,2]`, "RFC 6901 section 4: - is after the last element"},
		{"add at length", `[1]`, `[{"op":"add","path":"/1","value":2}]`, `[1,2]`, "index equal to the length appends"},
		{"move within array", `[1,2,3]`, `[{"op":"move","from":"/0","path":"/2"}]`, `[2,3,1]`, "RFC 6902 4.4: remove then add"},
		{"move onto itself", `{"a":{"b":1}}`, `[{"op":"move","from":"/a","path":"/a"}]`, `{"a":{"b":1}}`, "a location moved onto itself stays"},
		{"copy then edit the copy", `{"a":{"x":1}}`, `[{"op":"copy","from":"/a","path":"/b"},{"op":"replace","path":"/b/x","value":2}]`, `{"a":{"x":1},"b":{"x":2}}`, "a copy is independent of its source"},
		{"html stays", `{}`, `[{"op":"add","path":"/h","value":"<&>"}]`, `{"h":"<&>"}`, "no re-escaping"},
		{"escaped tokens", `{"a/b":{"m~n":1}}`, `[{"op":"replace","path":"/a~1b/m~0n","value":2}]`, `{"a/b":{"m~n":2}}`, "RFC 6901 section 4"},
		{"unknown members ignored", `{}`, `[{"op":"add","path":"/a","value":1,"extra":true,"from":7}]`, `{"a":1}`, "RFC 6902 section 4: other members are ignored"},
		{"null is a value", `{}`, `[{"op":"add","path":"/a","value":null}]`, `{"a":null}`, "value null is present"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := applyText(t, tt.doc, tt.patch)
			require.NoError(t, err, tt.reason)
			assert.Equal(t, tt.want, string(jsonv.Marshal(got)), tt.reason)
		})
	}
}

func TestApplyPatchFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc, patch string
		index            int
		reason           string
	}{
		{"missing member", `{"a":1}`, `[{"op":"replace","path":"/b","value":1}]`, 0, "RFC 6902 4.3: the target must exist"},
		{"missing parent", `{}`, `[{"op":"add","path":"/a/b","value":1}]`, 0, "RFC 6902 4.1: the parent must exist"},
		{"parent is scalar", `{"a":1}`, `[{"op":"add","path":"/a/b","value":1}]`, 0, "a scalar has no members"},
		{"add under scalar root", `1`, `[{"op":"add","path":"/a","value":1}]`, 0, "the reference client does nothing; RFC 6902 4.1 says error"},
		{"failed test", `{"a":1}`, `[{"op":"test","path":"/a","value":2}]`, 0, "RFC 6902 4.6"},
		{"missing is not null", `{}`, `[{"op":"test","path":"/a","value":null}]`, 0, "a missing member is never equal to null"},
		{"leading zero index", `[1,2]`, `[{"op":"replace","path":"/01","value":0}]`, 0, "RFC 6901 section 4: no leading zeros"},
		{"negative index", `[1,2]`, `[{"op":"remove","path":"/-1"}]`, 0, "RFC 6901 section 4: digits only"},
		{"plus index", `[1,2]`, `[{"op":"add","path":"/+1","value":0}]`, 0, "RFC 6901 section 4: digits only"},
		{"index beyond end", `[1]`, `[{"op":"add","path":"/2","value":0}]`, 0, "RFC 6902 4.1: at most the length"},
		{"remove at length", `[1]`, `[{"op":"remove","path":"/1"}]`, 0, "RFC 6902 4.2: the target must exist"},
		{"dash not existing", `[1]`, `[{"op":"replace","path":"/-","value":0}]`, 0, "- names no existing element"},
		{"dash as parent", `[[1]]`, `[{"op":"add","path":"/-/0","value":0}]`, 0, "- names no existing element"},
		{"move into own child", `{"a":{"b":{}}}`, `[{"op":"move","from":"/a","path":"/a/b/c"}]`, 0, "RFC 6902 4.4: from must not be a proper prefix of path"},
		{"move array into own child", `{"a":[[]]}`, `[{"op":"move","from":"/a","path":"/a/0/-"}]`, 0, "RFC 6902 4.4"},
		{"remove root", `{"a":1}`, `[{"op":"remove","path":""}]`, 0, "the whole document cannot be removed"},
		{"missing from", `{}`, `[{"op":"copy","from":"/x","path":"/y"}]`, 0, "RFC 6902 4.5: from must exist"},
		{"second op fails", `{"a":1}`, `[{"op":"replace","path":"/a","value":2},{"op":"remove","path":"/zz"}]`, 1, "RFC 6902 section 5: all or nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := mustParse(t, tt.doc)
			before := string(jsonv.Marshal(doc))
			ops, err := decodePatch(mustParse(t, tt.patch), limits{})
			require.NoError(t, err, "well-formed")
			got, err := applyPatch(doc, ops, limits{})
			require.ErrorIs(t, err, ErrPatchFailed, tt.reason)
			var pe *PatchError
			require.True(t, errors.As(err, &pe))
			assert.Equal(t, tt.index, pe.Index, "failing operation")
			assert.Same(t, doc, got, "the document is returned unchanged")
			assert.Equal(t, before, string(jsonv.Marshal(doc)), "nothing was edited in place")
		})
	}
}

func TestDecodePatchMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, patch string
		reason      string
	}{
		{"not an array", `{"op":"add"}`, "RFC 6902 section 3: a patch is an array"},
		{"operation not object", `[1]`, "RFC 6902 section 3: operations are objects"},
		{"missing op", `[{"path":"/a","value":1}]`, "RFC 6902 section 4: op is required"},
		{"op not string", `[{"op":1,"path":"/a"}]`, "op is a string"},
		{"unknown op", `[{"op":"merge","path":"/a","value":1}]`, "RFC 6902 section 4: one of six"},
		{"missing path", `[{"op":"remove"}]`, "RFC 6902 section 4: path is required"},
		{"path not string", `[{"op":"remove","path":1}]`, "path is a string"},
		{"path not pointer", `[{"op":"remove","path":"a"}]`, "RFC 6901: starts with /"},
		{"bad escape", `[{"op":"remove","path":"/a~2"}]`, "RFC 6901: ~ then 0 or 1"},
		{"missing from", `[{"op":"move","path":"/a"}]`, "RFC 6902 4.4: from is required"},
		{"from not pointer", `[{"op":"copy","from":"x","path":"/a"}]`, "RFC 6901"},
		{"missing value add", `[{"op":"add","path":"/a"}]`, "RFC 6902 4.1: value is required"},
		{"missing value replace", `[{"op":"replace","path":"/a"}]`, "RFC 6902 4.3"},
		{"missing value test", `[{"op":"test","path":"/a"}]`, "RFC 6902 4.6"},
		{"malformed after valid", `[{"op":"add","path":"/a","value":1},{"op":"bad","path":"/a"}]`, "the whole patch is checked first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodePatch(mustParse(t, tt.patch), limits{})
			assert.ErrorIs(t, err, errMalformedPatch, tt.reason)
			assert.NotErrorIs(t, err, ErrPatchFailed)
		})
	}
}

// TestApplyPatchSharesUntouched checks that a patch copies only the
// containers on its paths: the untouched parts of the new document are the
// very same nodes as in the old one.
func TestApplyPatchSharesUntouched(t *testing.T) {
	t.Parallel()
	doc := mustParse(t, `{"a":{"x":[1,2]},"b":{"y":[3]}}`)
	ops, err := decodePatch(mustParse(t, `[{"op":"replace","path":"/a/x/0","value":9}]`), limits{})
	require.NoError(t, err)
	next, err := applyPatch(doc, ops, limits{})
	require.NoError(t, err)
	assert.Same(t, doc.Get("b"), next.Get("b"), "untouched subtree is shared")
	assert.NotSame(t, doc.Get("a"), next.Get("a"), "the path is copied")
	assert.Equal(t, `{"a":{"x":[1,2]},"b":{"y":[3]}}`, string(jsonv.Marshal(doc)), "the old document is intact")
}

// TestCopyNeverMakesACycle checks copies of containers the same patch has
// already edited: each must be a snapshot, never the container itself.
func TestCopyNeverMakesACycle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc, patch, want string
	}{
		{"root after an edit", `{}`, `[{"op":"add","path":"/x","value":1},{"op":"copy","from":"","path":"/y"}]`, `{"x":1,"y":{"x":1}}`},
		{"container into its own child", `{"k":{}}`, `[{"op":"add","path":"/k/a","value":1},{"op":"copy","from":"/k","path":"/k/z"}]`, `{"k":{"a":1,"z":{"a":1}}}`},
		{"array into itself", `{"a":[]}`, `[{"op":"add","path":"/a/-","value":1},{"op":"copy","from":"/a","path":"/a/-"},{"op":"copy","from":"/a","path":"/a/0"}]`, `{"a":[[1,[1]],1,[1]]}`},
		{"edit after the copy", `{"a":{}}`, `[{"op":"add","path":"/a/x","value":1},{"op":"copy","from":"/a","path":"/b"},{"op":"add","path":"/b/y","value":2}]`, `{"a":{"x":1},"b":{"x":1,"y":2}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := applyText(t, tt.doc, tt.patch)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(jsonv.Marshal(got)), "a cycle would never finish marshalling")
			assert.Equal(t, len(tt.want), got.Size())
		})
	}
}

// TestPatchErrorText checks that errors name what the operation really is.
func TestPatchErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct{ doc, patch, want string }{
		{`{}`, `[{"op":"remove","path":"/zz","from":"/a"}]`, `operation 0 (remove "/zz"): patch failed to apply: no member "zz" (at "/zz")`},
		{`[1]`, `[{"op":"replace","path":"/99999999999999999999","value":0}]`, `index 99999999999999999999 is out of range for an array of 1 elements`},
		{`[1]`, `[{"op":"replace","path":"/01","value":0}]`, `"01" is not an array index`},
		{`{}`, `[{"op":"merge","path":"/a"}]`, `operation 0 (merge "/a"): malformed patch: unknown op "merge"`},
		{`{"a":"x"}`, `[{"op":"add","path":"/a/b","value":1}]`, `operation 0 (add "/a/b"): patch failed to apply: the parent "/a" is a string, not an object or array`},
		{`"x"`, `[{"op":"add","path":"/b","value":1}]`, `operation 0 (add "/b"): patch failed to apply: the whole document is a string, not an object or array`},
		{`{"a":[true]}`, `[{"op":"remove","path":"/a/0/c"}]`, `operation 0 (remove "/a/0/c"): patch failed to apply: the parent "/a/0" is a boolean, not an object or array`},
	}
	for _, tt := range tests {
		_, err := applyText(t, tt.doc, tt.patch)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
	}
}

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
// (docs/semantics.md lists them with the RFC clause that decides):
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
		path, _ := jsonv.ParsePointer(o.pathText)
		from, _ := jsonv.ParsePointer(o.fromText)
		if len(path) == 0 || ((o.kind == opMove || o.kind == opCopy) && len(from) == 0) {
			return false
		}
		for _, t := range append(path, from...) {
			if t == "" || (t[0] >= '0' && t[0] <= '9' && !jsonv.IsArrayIndex(t)) || t[0] == '+' || (t[0] == '-' && t != "-") {
				return false
			}
		}
		if o.kind == opMove && isProperPrefix(from, path) {
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
		for _, e := range n.All() {
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
			if !errors.As(err, &pe) && !errors.Is(err, errMalformedPatch) {
				t.Fatalf("error is not ours: %v", err)
			}
			if !errors.Is(err, errMalformedPatch) && !errors.Is(err, ErrPatchFailed) {
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
		for _, e := range n.All() {
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

// TestApplyPatchWide applies random patches to a document whose array and
// object are wide enough to be trees, chaining each result into the next
// round, and compares every outcome with evanphx. It checks the cached
// sizes and depths, and that no patch changes the document it was given.
func TestApplyPatchWide(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	elems := make([]string, 300)
	for i := range elems {
		elems[i] = fmt.Sprintf(`{"x":%d}`, i)
		if i%3 == 0 {
			elems[i] = strconv.Itoa(i)
		}
	}
	members := make([]string, 200)
	for i := range members {
		members[i] = fmt.Sprintf(`"k%d":[%d]`, i, i)
	}
	doc := mustParse(t, `{"a":[`+strings.Join(elems, ",")+`],"o":{`+strings.Join(members, ",")+`}}`)
	value := func() string {
		switch rng.IntN(3) {
		case 0:
			return strconv.Itoa(rng.IntN(1000))
		case 1:
			return fmt.Sprintf(`{"x":[%d,{"y":"z"}]}`, rng.IntN(1000))
		}
		return `"s"`
	}
	for round := range 300 {
		n, m := doc.Get("a").Len(), 250
		elem := func(extra int) string { return fmt.Sprintf("/a/%d", rng.IntN(n+extra)) }
		member := func() string { return fmt.Sprintf("/o/k%d", rng.IntN(m)) }
		var ops []string
		for range 1 + rng.IntN(12) {
			var op string
			switch rng.IntN(12) {
			case 0:
				op = fmt.Sprintf(`{"op":"add","path":"%s","value":%s}`, elem(1), value())
			case 1:
				op = fmt.Sprintf(`{"op":"remove","path":"%s"}`, elem(0))
			case 2:
				op = fmt.Sprintf(`{"op":"replace","path":"%s","value":%s}`, elem(0), value())
			case 3:
				op = fmt.Sprintf(`{"op":"move","from":"%s","path":"%s"}`, elem(0), elem(0))
			case 4:
				op = fmt.Sprintf(`{"op":"copy","from":"%s","path":"%s"}`, elem(0), elem(1))
			case 5:
				op = fmt.Sprintf(`{"op":"add","path":"%s","value":%s}`, member(), value())
			case 6:
				op = fmt.Sprintf(`{"op":"remove","path":"%s"}`, member())
			case 7:
				op = fmt.Sprintf(`{"op":"replace","path":"%s","value":%s}`, member(), value())
			case 8:
				op = fmt.Sprintf(`{"op":"move","from":"%s","path":"%s"}`, member(), member())
			case 9:
				op = fmt.Sprintf(`{"op":"copy","from":"%s","path":"%s/-"}`, elem(0), member())
			case 10:
				op = fmt.Sprintf(`{"op":"add","path":"%s/x/-","value":%s}`, elem(0), value())
			default:
				op = fmt.Sprintf(`{"op":"test","path":"%s","value":"s"}`, elem(0))
			}
			ops = append(ops, op)
		}
		patchText := "[" + strings.Join(ops, ",") + "]"
		before := string(jsonv.Marshal(doc))
		got, err := applyText(t, before, patchText)
		want, werr, ok := evanphx([]byte(before), []byte(patchText))
		require.True(t, ok, "evanphx panicked")
		if werr != nil {
			require.Error(t, err, "round %d: evanphx fails (%v), we apply %s", round, werr, patchText)
			continue
		}
		require.NoError(t, err, "round %d: %s", round, patchText)
		require.True(t, jsonv.Equal(mustParse(t, string(want)), got), "round %d: %s", round, patchText)
		require.Equal(t, len(jsonv.Marshal(got)), got.Size(), "round %d: the cached size", round)
		require.Equal(t, depthOf(got), got.Depth(), "round %d: the cached depth", round)
		require.Equal(t, before, string(jsonv.Marshal(doc)), "round %d: the document given is unchanged", round)
		doc = got
	}
}
