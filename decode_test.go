// Tests of Value.Decode, and FuzzDecode.

package aguistate

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type decItem struct {
	Name  string  `json:"name"`
	Price float64 `json:"price"`
}

type decOrder struct {
	ID    int64              `json:"id"`
	Items []decItem          `json:"items"`
	Tags  map[string]float64 `json:"tags"`
	Note  *float64           `json:"note"`
	Extra any                `json:"extra"`
}

type DecBase struct{ Score float64 }

type decEmbedded struct {
	DecBase
	Label string `json:"label"`
}

type decPtrEmbedded struct {
	*DecBase
	Label string
}

type decA struct{ X float64 }
type decB struct{ X float64 }

// decAmbiguous has two X fields at one depth, both untagged: encoding/json
// decodes into neither.
type decAmbiguous struct {
	decA
	decB
}

// decTagWins has two X fields at one depth; the tagged one wins.
type decTagWins struct {
	decA
	Y float32 `json:"X"`
}

type decKelvin struct{ K float64 }

type decQuoted struct {
	F float64 `json:"f,string"`
}

type decSkipped struct {
	F float64 `json:"-"`
	G int
}

// decExact receives the JSON text of its value as sent.
type decExact struct{ text string }

func (e *decExact) UnmarshalJSON(b []byte) error { e.text = string(b); return nil }

type decWithExact struct{ V decExact }

func ptr[T any](v T) *T { return &v }

const orderDoc = `{"id":7,"items":[{"name":"tea","price":2.5},{"name":"cake","price":0.1}],"tags":{"a":1e2},"note":null,"extra":[1,"x"]}`

// TestValueDecode covers Value.Decode's pointer lookup, its strictness and
// its check that no float is rounded.
func TestValueDecode(t *testing.T) {
	t.Parallel()
	isTypeErr := func(err error) bool { var e *json.UnmarshalTypeError; return errors.As(err, &e) }
	isInvalid := func(err error) bool { var e *json.InvalidUnmarshalError; return errors.As(err, &e) }
	cases := []struct {
		name, reason string
		doc, pointer string
		dst          func() any // a fresh destination
		want         any        // what dst points to after a successful decode
		wantErr      string     // the error's text, or "" for success
		as           func(error) bool
	}{
		{
			name: "whole value", reason: `"" names the whole value`,
			doc: orderDoc, pointer: "", dst: func() any { return new(decOrder) },
			want: decOrder{ID: 7, Items: []decItem{{"tea", 2.5}, {"cake", 0.1}},
				Tags: map[string]float64{"a": 100}, Extra: []any{1.0, "x"}},
		},
		{
			name: "nested member", reason: "a pointer selects a nested struct",
			doc: orderDoc, pointer: "/items/1", dst: func() any { return new(decItem) },
			want: decItem{"cake", 0.1},
		},
		{
			name: "escaped tokens", reason: "~1 is / and ~0 is ~ (RFC 6901 section 4)",
			doc: `{"a/b":{"m~n":1.5}}`, pointer: "/a~1b/m~0n", dst: func() any { return new(float64) },
			want: 1.5,
		},
		{
			name: "empty member name", reason: `"/" names the member called ""`,
			doc: `{"":{"x":1},"x":2}`, pointer: "/", dst: func() any { return new(map[string]int) },
			want: map[string]int{"x": 1},
		},
		{
			name: "missing member", reason: "a token that names nothing is an error naming the pointer",
			doc: orderDoc, pointer: "/items/0/colour", dst: func() any { return new(string) },
			wantErr: `aguistate: cannot decode "/items/0/colour": no member "colour" (at "/items/0/colour")`,
		},
		{
			name: "non-canonical index", reason: "an index with a leading zero names nothing (RFC 6901 section 4)",
			doc: orderDoc, pointer: "/items/01", dst: func() any { return new(decItem) },
			wantErr: `aguistate: cannot decode "/items/01": "01" is not an array index (at "/items/01")`,
		},
		{
			name: "index past the end", reason: "only existing elements can be named",
			doc: orderDoc, pointer: "/items/2", dst: func() any { return new(decItem) },
			wantErr: `aguistate: cannot decode "/items/2": index 2 is out of range for an array of 2 elements (at "/items/2")`,
		},
		{
			name: "dash index", reason: `"-" names the element after the last, which does not exist`,
			doc: orderDoc, pointer: "/items/-", dst: func() any { return new(decItem) },
			wantErr: `aguistate: cannot decode "/items/-": "-" names no element (at "/items/-")`,
		},
		{
			name: "through a scalar", reason: "a number has no members",
			doc: orderDoc, pointer: "/id/x", dst: func() any { return new(int) },
			wantErr: `aguistate: cannot decode "/id/x": a number has no member or element "x" (at "/id/x")`,
		},
		{
			name: "not a pointer", reason: `a non-empty pointer starts with "/"`,
			doc: orderDoc, pointer: "items", dst: func() any { return new(any) },
			wantErr: `aguistate: cannot decode "items": not a JSON Pointer: it does not start with "/"`,
		},
		{
			name: "unknown field", reason: "a member that names no field is an error",
			doc: `{"name":"x","price":1,"colour":"red"}`, dst: func() any { return new(decItem) },
			wantErr: `aguistate: cannot decode "": json: unknown field "colour"`,
		},
		{
			name: "case-insensitive field", reason: "members match field names case-insensitively, as in encoding/json",
			doc: `{"NAME":"x","Price":2}`, dst: func() any { return new(decItem) },
			want: decItem{"x", 2},
		},
		{
			name: "case-insensitive rounding", reason: "a case-insensitive match is checked too, under the member's own name",
			doc: `{"PRICE":9007199254740993}`, dst: func() any { return new(decItem) },
			wantErr: `aguistate: cannot decode "": number 9007199254740993 does not fit a float64 exactly (it would become 9007199254740992) (at "/PRICE")`,
		},
		{
			name: "unicode case folding", reason: "encoding/json matches the Kelvin sign to K, so its number is checked",
			doc: `{"\u212a":9007199254740993}`, dst: func() any { return new(decKelvin) },
			wantErr: "aguistate: cannot decode \"\": number 9007199254740993 does not fit a float64 exactly (it would become 9007199254740992) (at \"/\u212a\")",
		},
		{
			name: "tag rename", reason: `a field is found by its json tag name, not its Go name, which is unknown`,
			doc: `{"Label":"l","label2":1}`, dst: func() any { return new(decEmbedded) },
			wantErr: `aguistate: cannot decode "": json: unknown field "label2"`,
		},
		{
			name: "embedded struct", reason: "fields of an embedded struct are promoted",
			doc: `{"Score":0.5,"label":"l"}`, dst: func() any { return new(decEmbedded) },
			want: decEmbedded{DecBase{0.5}, "l"},
		},
		{
			name: "embedded struct rounding", reason: "promoted fields are checked",
			doc: `{"label":"l","score":0.1000000000000000000001}`, dst: func() any { return new(decEmbedded) },
			wantErr: `aguistate: cannot decode "": number 0.1000000000000000000001 does not fit a float64 exactly (it would become 0.1) (at "/score")`,
		},
		{
			name: "nil embedded pointer rounding", reason: "fields behind a nil embedded pointer are checked by type",
			doc: `{"Score":12345678901234567890}`, dst: func() any { return new(decPtrEmbedded) },
			wantErr: `aguistate: cannot decode "": number 12345678901234567890 does not fit a float64 exactly (it would become 12345678901234567000) (at "/Score")`,
		},
		{
			name: "ambiguous embedded fields", reason: "two untagged fields at one depth hide each other, so the member is unknown",
			doc: `{"X":9007199254740993}`, dst: func() any { return new(decAmbiguous) },
			wantErr: `aguistate: cannot decode "": json: unknown field "X"`,
		},
		{
			name: "tagged field wins", reason: "a tagged field hides an untagged one at its depth; its type (float32) decides",
			doc: `{"X":16777217}`, dst: func() any { return new(decTagWins) },
			wantErr: `aguistate: cannot decode "": number 16777217 does not fit a float32 exactly (it would become 16777216) (at "/X")`,
		},
		{
			name: "skipped field", reason: `a field tagged "-" takes no member, so the member is unknown`,
			doc: `{"F":0.1000000000000000000001,"G":1}`, dst: func() any { return new(decSkipped) },
			wantErr: `aguistate: cannot decode "": json: unknown field "F"`,
		},
		{
			name: "slice rounding", reason: "slice elements are checked and the error names the element",
			doc: `[0.1,0.2,9007199254740993]`, dst: func() any { return new([]float64) },
			wantErr: `aguistate: cannot decode "": number 9007199254740993 does not fit a float64 exactly (it would become 9007199254740992) (at "/2")`,
		},
		{
			name: "array extra elements", reason: "encoding/json drops elements past a Go array's length, so they are not checked",
			doc: `[1.5,9007199254740993]`, dst: func() any { return new([1]float64) },
			want: [1]float64{1.5},
		},
		{
			name: "map rounding", reason: "map values are checked",
			doc: `{"a":0.25,"b/c":12345678901234567890}`, dst: func() any { return new(map[string]float64) },
			wantErr: `aguistate: cannot decode "": number 12345678901234567890 does not fit a float64 exactly (it would become 12345678901234567000) (at "/b~1c")`,
		},
		{
			name: "any", reason: "numbers decoded into an interface{} become float64 and are checked",
			doc: `{"a":[1,0.1,-2.5e-3,1E2]}`, dst: func() any { return new(any) },
			want: map[string]any{"a": []any{1.0, 0.1, -0.0025, 100.0}},
		},
		{
			name: "any rounding", reason: "a nested number in an interface{} is checked and named",
			doc: `{"a":[1,{"b":0.1000000000000000000001}]}`, pointer: "", dst: func() any { return new(any) },
			wantErr: `aguistate: cannot decode "": number 0.1000000000000000000001 does not fit a float64 exactly (it would become 0.1) (at "/a/1/b")`,
		},
		{
			name: "any field rounding", reason: "the pointer of the number starts with the pointer given",
			doc: `{"o":{"id":1,"extra":{"big":9007199254740993}}}`, pointer: "/o/extra",
			dst:     func() any { return new(any) },
			wantErr: `aguistate: cannot decode "/o/extra": number 9007199254740993 does not fit a float64 exactly (it would become 9007199254740992) (at "/o/extra/big")`,
		},
		{
			name: "interface holding a pointer", reason: "encoding/json decodes through it, so its fields are checked and strict",
			doc: `{"name":"x","price":9007199254740993}`, dst: func() any { var v any = &decItem{}; return &v },
			wantErr: `aguistate: cannot decode "": number 9007199254740993 does not fit a float64 exactly (it would become 9007199254740992) (at "/price")`,
		},
		{
			name: "pointer to float", reason: "*float64 is checked like float64",
			doc: `{"note":9007199254740993}`, dst: func() any { return new(decOrder) },
			wantErr: `aguistate: cannot decode "": number 9007199254740993 does not fit a float64 exactly (it would become 9007199254740992) (at "/note")`,
		},
		{
			name: "pointer to float exact", reason: "a *float64 gets an exact number",
			doc: `{"note":0.1}`, dst: func() any { return new(decOrder) },
			want: decOrder{Note: ptr(0.1)},
		},
		{
			name: "float64 exact", reason: "numbers whose shortest float64 form has their value decode: 0.1 prints back as 0.1",
			doc: `[0.1,1.5,-0,0.0,1e2,100e-2,5e-324,1.7976931348623157e308]`, dst: func() any { return new([]float64) },
			want: []float64{0.1, 1.5, 0, 0, 100, 1, 5e-324, 1.7976931348623157e308},
		},
		{
			name: "float32 exact", reason: "0.1 into a float32 prints back as 0.1 at 32 bits",
			doc: `0.1`, dst: func() any { return new(float32) },
			want: float32(0.1),
		},
		{
			name: "float32 rounding", reason: "16777217 needs 25 bits of mantissa",
			doc: `16777217`, dst: func() any { return new(float32) },
			wantErr: `aguistate: cannot decode "": number 16777217 does not fit a float32 exactly (it would become 16777216)`,
		},
		{
			name: "float64 big integer", reason: "12345678901234567890 would lose its last digits",
			doc: `12345678901234567890`, dst: func() any { return new(float64) },
			wantErr: `aguistate: cannot decode "": number 12345678901234567890 does not fit a float64 exactly (it would become 12345678901234567000)`,
		},
		{
			name: "float64 underflow", reason: "1e-400 would become 0",
			doc: `1e-400`, dst: func() any { return new(float64) },
			wantErr: `aguistate: cannot decode "": number 1e-400 does not fit a float64 exactly (it would become 0)`,
		},
		{
			name: "float64 overflow", reason: "encoding/json rejects 1e400 itself, with an UnmarshalTypeError",
			doc: `1e400`, dst: func() any { return new(float64) },
			wantErr: `aguistate: cannot decode "": json: cannot unmarshal number 1e400 into Go value of type float64`,
			as:      isTypeErr,
		},
		{
			name: "int64 overflow", reason: "encoding/json rejects an integer that overflows",
			doc: `12345678901234567890`, dst: func() any { return new(int64) },
			wantErr: `aguistate: cannot decode "": json: cannot unmarshal number 12345678901234567890 into Go value of type int64`,
			as:      isTypeErr,
		},
		{
			name: "int fraction", reason: "encoding/json rejects a fraction into an int",
			doc: `1.5`, dst: func() any { return new(int) },
			wantErr: `aguistate: cannot decode "": json: cannot unmarshal number 1.5 into Go value of type int`,
			as:      isTypeErr,
		},
		{
			name: "json.Number", reason: "json.Number keeps every digit",
			doc: `[12345678901234567890,0.1000000000000000000001]`, dst: func() any { return new([]json.Number) },
			want: []json.Number{"12345678901234567890", "0.1000000000000000000001"},
		},
		{
			name: "uint64 max", reason: "the largest uint64 fits",
			doc: `18446744073709551615`, dst: func() any { return new(uint64) },
			want: uint64(18446744073709551615),
		},
		{
			name: "negative uint", reason: "-1 does not fit a uint",
			doc: `-1`, dst: func() any { return new(uint) },
			wantErr: `aguistate: cannot decode "": json: cannot unmarshal number -1 into Go value of type uint`,
			as:      isTypeErr,
		},
		{
			name: "wrong type", reason: "encoding/json's type errors come through errors.As",
			doc: `{"name":"x","price":"cheap"}`, dst: func() any { return new(decItem) },
			wantErr: `aguistate: cannot decode "": json: cannot unmarshal string into Go struct field decItem.price of type float64`,
			as:      isTypeErr,
		},
		{
			name: "string option", reason: `a ",string" field sees a string, which encoding/json parses itself; it is not checked`,
			doc: `{"f":"0.1000000000000000000001"}`, dst: func() any { return new(decQuoted) },
			want: decQuoted{0.1},
		},
		{
			name: "unmarshaler", reason: "a json.Unmarshaler sees the text as sent, so it is not checked",
			doc: `{"V":0.1000000000000000000001}`, dst: func() any { return new(decWithExact) },
			want: decWithExact{decExact{"0.1000000000000000000001"}},
		},
		{
			name: "raw message", reason: "json.RawMessage is a json.Unmarshaler",
			doc: `{"a":9007199254740993}`, pointer: "/a", dst: func() any { return new(json.RawMessage) },
			want: json.RawMessage(`9007199254740993`),
		},
		{
			name: "null float", reason: "null leaves a float as it is and is not a number",
			doc: `{"name":null,"price":null}`, dst: func() any { return &decItem{"keep", 1} },
			want: decItem{"keep", 1},
		},
		{
			name: "lone surrogate", reason: "encoding/json turns a lone surrogate into U+FFFD",
			doc: `"a\ud800b"`, dst: func() any { return new(string) },
			want: "a\uFFFDb",
		},
		{
			name: "nil destination", reason: "encoding/json needs a non-nil pointer",
			doc: `1`, dst: func() any { return (*int)(nil) },
			wantErr: `aguistate: cannot decode "": json: Unmarshal(nil *int)`,
			as:      isInvalid,
		},
		{
			name: "non-pointer destination", reason: "encoding/json needs a pointer",
			doc: `1`, dst: func() any { return 0 },
			wantErr: `aguistate: cannot decode "": json: Unmarshal(non-pointer int)`,
			as:      isInvalid,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := valueOf(mustParse(t, tc.doc))
			dst := tc.dst()
			err := v.Decode(tc.pointer, dst)
			if tc.wantErr != "" {
				require.Error(t, err, tc.reason)
				assert.ErrorIs(t, err, errDecode, tc.reason)
				assert.EqualError(t, err, tc.wantErr, tc.reason)
				if tc.as != nil {
					assert.True(t, tc.as(err), "%s: errors.As gets the encoding/json error", tc.reason)
				}
				return
			}
			require.NoError(t, err, tc.reason)
			got := reflect.ValueOf(dst).Elem().Interface()
			assert.Equal(t, tc.want, got, tc.reason)
		})
	}
}

// TestValueDecodeZero decodes the zero Value, which is null.
func TestValueDecodeZero(t *testing.T) {
	t.Parallel()
	var got any = "unchanged"
	require.NoError(t, Value{}.Decode("", &got))
	assert.Nil(t, got)
	assert.ErrorIs(t, Value{}.Decode("/a", &got), errDecode)
}

// TestTypeFieldsCache checks that a struct type's fields are found once and
// shared.
func TestTypeFieldsCache(t *testing.T) {
	t.Parallel()
	a := cachedFields(reflect.TypeFor[decOrder]())
	b := cachedFields(reflect.TypeFor[decOrder]())
	assert.Same(t, a, b)
	assert.Equal(t, []string{"id", "items", "tags", "note", "extra"}, fieldNames(a))
	assert.Equal(t, []string{"X"}, fieldNames(cachedFields(reflect.TypeFor[decTagWins]())))
	assert.Empty(t, fieldNames(cachedFields(reflect.TypeFor[decAmbiguous]())))
}

func fieldNames(fs *structFields) []string {
	var names []string
	for _, f := range fs.list {
		names = append(names, f.name)
	}
	return names
}

// fuzzTarget is a small struct of every kind Decode checks.
type fuzzTarget struct {
	DecBase
	A float64            `json:"a"`
	B []float32          `json:"b"`
	C map[string]any     `json:"c"`
	D *int64             `json:"d"`
	E json.Number        `json:"e"`
	F [2]float64         `json:"f"`
	G map[string]float64 `json:"g"`
	H any                `json:"h"`
}

// FuzzDecode decodes random JSON into a struct and into an interface{}:
// nothing panics, every error wraps errDecode, and a value decoded into an
// interface{} marshals back to the same JSON value, numbers exactly.
func FuzzDecode(f *testing.F) {
	for _, s := range []struct{ doc, pointer string }{
		{orderDoc, ""},
		{orderDoc, "/items/1"},
		{`{"a":0.1,"b":[1.5,16777217],"c":{"x":[1,2.5]},"d":9007199254740993,"e":1e400}`, ""},
		{`{"Score":0.1000000000000000000001,"f":[1,2,3],"g":{"a":1e-400}}`, ""},
		{`{"h":{"deep":[[12345678901234567890]]},"A":-0}`, ""},
		{`{"a/b":{"m~n":[0.5]}}`, "/a~1b/m~0n"},
		{`[1,"x",null,true,{"":{}}]`, "/4/"},
		{`"\ud800"`, ""},
		{`[25419.0,1.5e3,1E2,-0.0,25419,1.5,1e30]`, ""},
	} {
		f.Add(s.doc, s.pointer)
	}
	f.Fuzz(func(t *testing.T, doc, pointer string) {
		n, err := jsonv.Parse([]byte(doc), 64)
		if err != nil {
			return
		}
		v := valueOf(n)
		var target fuzzTarget
		if err := v.Decode(pointer, &target); err != nil && !errors.Is(err, errDecode) {
			t.Fatalf("struct: error does not wrap errDecode: %v", err)
		}
		var ints []int64
		if v.Decode(pointer, &ints) == nil {
			sub, _ := jsonv.Resolve(n, mustTokens(t, pointer))
			for i, x := range ints {
				if !jsonv.NumberEqual(strconv.FormatInt(x, 10), sub.Elem(i).Text()) {
					t.Fatalf("element %d: %s decoded as %d", i, sub.Elem(i).Text(), x)
				}
			}
		}
		var out any
		err = v.Decode(pointer, &out)
		if err != nil {
			if !errors.Is(err, errDecode) {
				t.Fatalf("any: error does not wrap errDecode: %v", err)
			}
			return
		}
		tokens, err := jsonv.ParsePointer(pointer)
		require.NoError(t, err, "Decode succeeded on a pointer that does not parse")
		sub, err := jsonv.Resolve(n, tokens)
		if err != nil {
			t.Fatalf("Decode succeeded on a pointer lookup rejects: %v", err)
		}
		if bytes.Contains(jsonv.Marshal(sub), []byte(`\ud`)) {
			return // lone surrogates become U+FFFD
		}
		text, err := json.Marshal(out)
		if err != nil {
			t.Fatalf("marshal %#v: %v", out, err)
		}
		back, err := jsonv.Parse(text, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", text, err)
		}
		if !jsonv.Equal(sub, back) {
			t.Fatalf("decoded value is not exact:\n sent: %s\n  got: %s", jsonv.Marshal(sub), text)
		}
	})
}

// TestValueDecodeLenient checks that DecodeLenient ignores the members a
// struct does not model, where Decode refuses them, and checks numbers the
// same way.
func TestValueDecodeLenient(t *testing.T) {
	t.Parallel()
	var v Value
	require.NoError(t, json.Unmarshal([]byte(`{"cart":{"total":12.5,"addedByAgent":{"x":1}},"big":9007199254740993}`), &v))
	type cart struct {
		Total float64 `json:"total"`
	}
	var strict, lenient cart
	assert.ErrorContains(t, v.Decode("/cart", &strict), `unknown field "addedByAgent"`)
	require.NoError(t, v.DecodeLenient("/cart", &lenient))
	assert.Equal(t, cart{Total: 12.5}, lenient)
	var f float64
	assert.ErrorContains(t, v.DecodeLenient("/big", &f), "does not fit a float64 exactly", "numbers are checked as Decode checks them")
	assert.ErrorContains(t, v.DecodeLenient("/missing", &f), `cannot decode "/missing"`)
}

func mustTokens(t testing.TB, pointer string) []string {
	t.Helper()
	tokens, err := jsonv.ParsePointer(pointer)
	require.NoError(t, err)
	return tokens
}

// TestDecodeNumberRule checks the number rule (issue 8, kind 5) for every
// integer and float kind: a number decodes when its exact value fits the
// type, whatever its spelling, and is refused when it would be rounded or
// overflow.
func TestDecodeNumberRule(t *testing.T) {
	t.Parallel()
	kinds := []any{int(0), int8(0), int16(0), int32(0), int64(0), uint(0), uint8(0), uint16(0), uint32(0), uint64(0), uintptr(0), float32(0), float64(0)}
	type row struct {
		lit    string
		want   string // the value, when it fits
		fits   func(k reflect.Kind) bool
		reason string
	}
	isFloat := func(k reflect.Kind) bool { return k == reflect.Float32 || k == reflect.Float64 }
	all := func(reflect.Kind) bool { return true }
	signed := func(k reflect.Kind) bool { return k < reflect.Uint || k > reflect.Uintptr }
	notByte := func(k reflect.Kind) bool { return k != reflect.Int8 && k != reflect.Uint8 }
	rows := []row{
		{"100", "100", all, "the plain spelling"},
		{"100.0", "100", all, "a zero fraction"},
		{"1E2", "100", all, "an exponent, capital E"},
		{"1e+2", "100", all, "a signed exponent"},
		{"10000e-2", "100", all, "a negative exponent that leaves an integer"},
		{"-0.0", "0", all, "negative zero is zero, for unsigned types too"},
		{"-0", "0", all, "negative zero without a fraction"},
		{"0e999999999999", "0", all, "zero with a huge exponent"},
		{"-5.0", "-5", signed, "negative values fit signed types and floats only"},
		{"1.5e3", "1500", notByte, "1500 overflows the 8-bit types"},
		{"25419.0", "25419", notByte, "issue 8's daily average"},
		{"4e4", "40000", func(k reflect.Kind) bool { return notByte(k) && k != reflect.Int16 }, "int16 stops at 32767"},
		{"1.5", "1.5", isFloat, "a fraction fits only a float"},
		{"1e30", "1e30", isFloat, "overflows every integer; each float's shortest form of it is 1e+30"},
		{"1e99999999999999999999", "", func(reflect.Kind) bool { return false }, "overflows every type"},
		{"9007199254740993", "9007199254740993", func(k reflect.Kind) bool {
			return k == reflect.Int || k == reflect.Int64 || k == reflect.Uint || k == reflect.Uint64 || k == reflect.Uintptr
		}, "2^53+1 fits 64-bit integers, and a float would round it"},
	}
	for _, r := range rows {
		for _, k := range kinds {
			typ := reflect.TypeOf(k)
			t.Run(r.lit+" into "+typ.String(), func(t *testing.T) {
				dst := reflect.New(typ)
				err := valueOf(mustParse(t, r.lit)).Decode("", dst.Interface())
				if !r.fits(typ.Kind()) {
					assert.Error(t, err, r.reason)
					return
				}
				require.NoError(t, err, r.reason)
				var got string
				switch v := dst.Elem(); {
				case v.CanInt():
					got = strconv.FormatInt(v.Int(), 10)
				case v.CanUint():
					got = strconv.FormatUint(v.Uint(), 10)
				default:
					got = strconv.FormatFloat(v.Float(), 'g', -1, typ.Bits())
				}
				assert.True(t, jsonv.NumberEqual(r.want, got), "got %s; %s", got, r.reason)
			})
		}
	}

	type stats struct {
		Average int64            `json:"daily_average"`
		Total   uint16           `json:"total"`
		Hundred *int             `json:"hundred"`
		Zero    uint8            `json:"zero"`
		Counts  []int32          `json:"counts"`
		ByDay   map[string]int64 `json:"byDay"`
		Pair    [2]uint64        `json:"pair"`
		Ratio   float32          `json:"ratio"`
	}
	var got stats
	doc := `{"daily_average":25419.0,"total":1.5e3,"hundred":1E2,"zero":-0.0,"counts":[1.0,2e0],"byDay":{"mon":3.00},"pair":[4e1,5],"ratio":0.5}`
	require.NoError(t, valueOf(mustParse(t, doc)).Decode("", &got), "struct fields, slices, maps, arrays and pointers follow the rule")
	hundred := 100
	assert.Equal(t, stats{25419, 1500, &hundred, 0, []int32{1, 2}, map[string]int64{"mon": 3}, [2]uint64{40, 5}, 0.5}, got)
	err := valueOf(mustParse(t, `{"total":1.5e5}`)).Decode("", &got)
	assert.ErrorContains(t, err, "cannot unmarshal number 1.5e5 into Go struct field stats.total of type uint16",
		"an overflow is refused, with the number as sent")
	err = valueOf(mustParse(t, `{"counts":[1,2.5]}`)).Decode("", &got)
	assert.ErrorContains(t, err, "cannot unmarshal number 2.5", "a fraction is refused")
}
