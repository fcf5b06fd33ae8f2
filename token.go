// Token events: the short path of TEXT_MESSAGE_CONTENT,
// REASONING_MESSAGE_CONTENT and TOOL_CALL_ARGS in their common shape, the
// events a stream carries by the thousand.

package aguistate

import (
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// token is a CONTENT or ARGS event of the common shape: a JSON object of
// exactly three string members, "type", the id member of its type and
// "delta", in any order. Anything else (another member, a member of
// another kind, a duplicate, an escape in a name, text that is not JSON)
// takes the general path, which reads it, or says what is wrong with it.
type token struct {
	typ   *tokenType
	id    string
	delta string // a view of the event's text when view is true
	view  bool   // delta is not a copy: it is valid until the next event
	order [3]uint8
}

// tokenType is what the short path knows of one type of token event.
type tokenType struct {
	name   string
	node   *jsonv.Node // the "type" member's value
	idName string      // "messageId" or "toolCallId"
	kind   constructKind
}

var tokenTypes = [...]tokenType{
	{name: "TEXT_MESSAGE_CONTENT", idName: "messageId", kind: textConstruct},
	{name: "REASONING_MESSAGE_CONTENT", idName: "messageId", kind: reasoningConstruct},
	{name: "TOOL_CALL_ARGS", idName: "toolCallId", kind: toolConstruct},
}

func init() {
	for i := range tokenTypes {
		tokenTypes[i].node = jsonv.NewString(tokenTypes[i].name)
	}
}

// The members of a token, in the order of token.order's values.
const (
	tokenTypeMember = iota
	tokenIDMember
	tokenDeltaMember
)

// scanToken reads text as a token event, strictly as [jsonv.Parse] reads
// JSON, and reports whether it is one. lastID, when the event's id equals
// it, is the id returned, so that a stream of tokens to one message
// allocates no id. The delta is a view of text (tk.view) when it has no
// escape.
func scanToken(text []byte, lastID string) (tk token, ok bool) {
	var raw [3][]byte // the members' raw texts, by member
	var esc [3]bool
	var idName string
	i := skipSpace(text, 0)
	if i == len(text) || text[i] != '{' {
		return tk, false
	}
	seen := 0
	for n := range 3 {
		i = skipSpace(text, i+1)
		m, name, ok := tokenMemberAt(text, i)
		if !ok {
			return tk, false
		}
		if m == tokenIDMember {
			idName = name
		}
		i = skipSpace(text, i+len(name)+2)
		if i == len(text) || text[i] != ':' {
			return tk, false
		}
		i = skipSpace(text, i+1)
		var end int
		if seen&(1<<m) != 0 {
			return tk, false
		}
		seen |= 1 << m
		if m == tokenTypeMember {
			// Most events are not tokens: the first bytes of their type
			// end the scan.
			if tk.typ, end = tokenTypeAt(text, i); tk.typ == nil {
				return tk, false
			}
		} else if raw[m], end, esc[m], ok = scanString(text, i); !ok {
			return tk, false
		}
		tk.order[n] = m
		i = skipSpace(text, end)
		if i == len(text) || n < 2 && text[i] != ',' {
			return tk, false
		}
	}
	if text[i] != '}' || skipSpace(text, i+1) != len(text) || esc[tokenIDMember] {
		return tk, false
	}
	if idName != tk.typ.idName || len(raw[tokenIDMember]) == 0 {
		return tk, false
	}
	if tk.id = lastID; string(raw[tokenIDMember]) != lastID {
		tk.id = string(raw[tokenIDMember])
	}
	delta := raw[tokenDeltaMember]
	if !esc[tokenDeltaMember] {
		tk.delta, tk.view = unsafe.String(unsafe.SliceData(delta), len(delta)), true
		return tk, true
	}
	// An escape: jsonv reads the string, quotes included.
	start := unsafe.Pointer(unsafe.SliceData(delta))
	off := int(uintptr(start)-uintptr(unsafe.Pointer(unsafe.SliceData(text)))) - 1
	n, err := jsonv.Parse(text[off:off+len(delta)+2], 1)
	if err != nil {
		return tk, false
	}
	tk.delta = n.Text()
	return tk, true
}

// tokenMembers are the names of a token's members, and which member each
// names.
var tokenMembers = [...]struct {
	name string
	m    uint8
}{{"type", tokenTypeMember}, {"delta", tokenDeltaMember}, {"messageId", tokenIDMember}, {"toolCallId", tokenIDMember}}

// tokenMemberAt returns the member of a token whose name, as a JSON string
// without escapes, starts text at i, and that name; ok is false for any
// other string.
func tokenMemberAt(text []byte, i int) (m uint8, name string, ok bool) {
	for _, tm := range tokenMembers {
		if quotedAt(text, i, tm.name) {
			return tm.m, tm.name, true
		}
	}
	return 0, "", false
}

// tokenTypeAt returns the token type whose name, as a JSON string without
// escapes, starts text at i, and the index after that string; or nil.
func tokenTypeAt(text []byte, i int) (*tokenType, int) {
	for j := range tokenTypes {
		if name := tokenTypes[j].name; quotedAt(text, i, name) {
			return &tokenTypes[j], i + len(name) + 2
		}
	}
	return nil, 0
}

// quotedAt reports whether text holds at i the JSON string of s, a
// non-empty string that needs no escape, with no escape. Its first byte is
// compared first: most strings differ there.
func quotedAt(text []byte, i int, s string) bool {
	return len(text)-i >= len(s)+2 && text[i] == '"' && text[i+1] == s[0] &&
		string(text[i+1:i+1+len(s)]) == s && text[i+1+len(s)] == '"'
}

// node returns the event as the general path reads it: an object of its
// three members in their order. Its delta is a copy.
func (tk *token) node() *jsonv.Node {
	names := make([]string, 3)
	vals := make([]*jsonv.Node, 3)
	for i, m := range tk.order {
		switch m {
		case tokenTypeMember:
			names[i], vals[i] = "type", tk.typ.node
		case tokenIDMember:
			names[i], vals[i] = tk.typ.idName, jsonv.NewString(tk.id)
		default:
			d := tk.delta
			if tk.view {
				d = strings.Clone(d)
			}
			names[i], vals[i] = "delta", jsonv.NewString(d)
		}
	}
	return jsonv.NewObject(names, vals)
}

// skipSpace returns the index of the first byte of text at or after i that
// is not JSON white space.
func skipSpace(text []byte, i int) int {
	for i < len(text) {
		switch text[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString reads the JSON string that starts at text[i]: it returns its
// raw text between the quotes, the index after the closing quote, and
// whether it holds an escape, which it does not check. It fails on a
// control character, invalid UTF-8, or a string that does not end.
func scanString(text []byte, i int) (raw []byte, end int, escaped, ok bool) {
	if i >= len(text) || text[i] != '"' {
		return nil, 0, false, false
	}
	var high byte
	for j := i + 1; j < len(text); j++ {
		switch c := text[j]; {
		case c == '"':
			raw = text[i+1 : j]
			if high >= utf8.RuneSelf && !utf8.Valid(raw) {
				return nil, 0, false, false
			}
			return raw, j + 1, escaped, true
		case c == '\\':
			escaped = true
			j++ // the byte escaped, which does not end the string
		case c < 0x20:
			return nil, 0, false, false
		default:
			high |= c
		}
	}
	return nil, 0, false, false
}

// applyToken applies a token event, as dispatch applies the event that
// tk.node() returns. last is the message the last event appended text to.
func (t *txn) applyToken(tk *token, last tokenTarget) error {
	if err := t.checkLifecycle(tk.typ.name); err != nil {
		return err
	}
	t.closeLane("") // the event has no "subagentRunId": the parent's lane
	k := tk.typ.kind
	if k == toolConstruct {
		t.appendToolArgs(tk.id, tk.delta, nil)
		return nil
	}
	var m Message
	i, ok := last.i, false
	if last.view == t.old && last.kind == k && last.id == tk.id {
		m, ok = t.next.messages.At(i), true
	} else {
		m, i, ok = t.openTarget(k, tk.id)
	}
	if ok {
		t.appendTo(k, i, m, tk.delta, nil)
		t.appended = tokenTarget{view: t.next, kind: k, id: tk.id, i: i}
	}
	return nil
}

// tokenTarget is the open message of kind kind with id that a token event
// appended text to, at position i of the messages of view. A token event
// to the same message that applies to that view need not look for it.
type tokenTarget struct {
	view *view
	kind constructKind
	id   string
	i    int
}
