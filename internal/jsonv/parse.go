// The strict RFC 8259 parser.

package jsonv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/aguistate/aguistate/internal/persist"
)

// ErrSyntax, ErrDuplicateName and ErrTooDeep classify a [SyntaxError].
var (
	ErrSyntax        = errors.New("invalid JSON")
	ErrDuplicateName = errors.New("duplicate member name")
	ErrTooDeep       = errors.New("nesting too deep")
)

// SyntaxError reports where and why a text is not acceptable JSON.
type SyntaxError struct {
	Offset int    // byte offset in the input where the problem was found
	Msg    string // what was wrong
	Err    error  // ErrSyntax, ErrDuplicateName or ErrTooDeep
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at offset %d: %s", e.Err, e.Offset, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// DefaultMaxDepth is the nesting depth Parse allows when given 0.
const DefaultMaxDepth = 1000

// Parse reads exactly one JSON value from data, strictly as RFC 8259 says:
// UTF-8 only, no duplicate member names in any object, nothing but white
// space after the value, and containers nested at most maxDepth deep
// (0 means [DefaultMaxDepth]). It returns a *SyntaxError on failure.
//
// Containers are built at their exact size. Values are shared where they
// can be: small integers and short strings (see [NewNumber], [NewString]),
// and repeated short strings, numbers and member names.
//
// A container nested in another (at depth 2 or more) whose compact text is
// at most packMax bytes is held as that text (see packed.go); [ParseFrom]
// chooses the depth.
func Parse(data []byte, maxDepth int) (*Node, error) { return parse(data, maxDepth, 2) }

// ParseFrom is [Parse] holding as their text the small containers at
// depth packFrom or more (0 for none; the value itself is at depth 1).
func ParseFrom(data []byte, maxDepth, packFrom int) (*Node, error) {
	return parse(data, maxDepth, packFrom)
}

func parse(data []byte, maxDepth, packFrom int) (*Node, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if packFrom <= 0 {
		packFrom = maxDepth + 1
	}
	p := parsers.Get().(*parser)
	p.data, p.pos, p.maxDepth, p.packFrom = data, 0, maxDepth, packFrom
	defer p.release()
	p.skipSpace()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.fail(ErrSyntax, "expected the end of the input after the value, found %s", p.found())
	}
	return n, nil
}

// parser reads one text. Its stacks hold the children of the containers
// being read, which are copied out at their exact size when the container
// closes; a parser is reused, and keeps its stacks when they are small.
type parser struct {
	data     []byte
	pos      int
	maxDepth int
	packFrom int      // the least depth of a container that may be packed
	loose    int      // white space runs and escapes not as Append writes them, so far
	elems    []*Node  // elements of the open arrays
	members  []member // members of the open objects
	at       []int    // where each member of the open objects starts
	names    [cacheSize]string
	values   [cacheSize]*Node
}

// cacheSize is how many recent member names and short values a parser
// remembers, to share rather than copy them; shortMax is the longest.
const (
	cacheSize = 256
	shortMax  = 24
)

// keepMax is the longest stack a parser keeps for the next text.
const keepMax = 1 << 14

var parsers = sync.Pool{New: func() any { return new(parser) }}

// release returns p to the pool. Containers clear the part of the stacks
// they used when they close, so only a text that failed leaves values on
// them: a parse costs what its text costs, not the stacks' capacity.
func (p *parser) release() {
	p.data = nil
	if cap(p.elems) > keepMax || cap(p.members) > keepMax {
		return
	}
	clear(p.elems)
	clear(p.members)
	p.elems, p.members, p.at = p.elems[:0], p.members[:0], p.at[:0]
	parsers.Put(p)
}

// slot returns the cache slot of a short text (at most shortMax bytes):
// a hash of its length, its first and last eight bytes, and the seed. A
// producer that made texts share slots would only defeat the sharing.
func slot(b []byte, k Kind) int {
	h := cacheSeed ^ uint64(len(b))<<8 ^ uint64(k)
	if len(b) >= 8 {
		h ^= binary.LittleEndian.Uint64(b) * 0x9e3779b97f4a7c15
		h ^= bits.RotateLeft64(binary.LittleEndian.Uint64(b[len(b)-8:])*0xc2b2ae3d27d4eb4f, 31)
	} else {
		for _, c := range b {
			h = (h ^ uint64(c)) * 0x100000001b3
		}
	}
	h ^= h >> 32
	h *= 0xd6e8feb86659fd93
	return int((h >> 32) % cacheSize)
}

var cacheSeed = maphash.Comparable(maphash.MakeSeed(), 0)

// shared returns the scalar of kind k whose text is b: the cached one when
// it is, and otherwise a new one, cached when short.
func (p *parser) shared(k Kind, b []byte, size int) *Node {
	if len(b) > shortMax {
		return newScalar(k, string(b), size)
	}
	i := slot(b, k)
	if n := p.values[i]; n != nil && n.Kind() == k && n.scalar().text == string(b) {
		return n
	}
	n := newScalar(k, string(b), size)
	p.values[i] = n
	return n
}

// name returns the member name whose text is b, cached when short.
func (p *parser) name(b []byte) string {
	if len(b) > shortMax {
		return string(b)
	}
	i := slot(b, Object)
	if s := p.names[i]; s == string(b) {
		return s
	}
	s := string(b)
	p.names[i] = s
	return s
}

func (p *parser) fail(kind error, format string, args ...any) error {
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...), Err: kind}
}

func (p *parser) skipSpace() {
	start := p.pos
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			if p.pos > start {
				p.loose++
			}
			return
		}
	}
}

// pack returns the container that ends at p.pos and starts at start as a
// packed one, when its text is compact and written as Append writes it,
// small enough, and deep enough; and otherwise nil. loose is p.loose when
// the container began; depth, its depth; kids, its children.
func (p *parser) pack(start, loose, depth int, kids []*Node) *Node {
	if !p.packable(start, loose, depth) {
		return nil
	}
	deepest := 0
	for _, v := range kids {
		deepest = max(deepest, v.Depth())
	}
	return newPacked(unsafe.String(&p.data[start], p.pos-start), len(kids), deepest+1)
}

// packable reports whether the container that ends at p.pos, and started
// at start when p.loose was loose, may be packed at depth.
func (p *parser) packable(start, loose, depth int) bool {
	return depth >= p.packFrom && p.pos-start <= packMax && p.loose == loose
}

// canonical counts in p.loose a string literal, from start to p.pos, whose
// text is not as AppendString writes it.
func (p *parser) canonical(start int, text []byte) {
	var stack [packMax]byte
	if p.pos-start > packMax || string(AppendString(stack[:0], string(text))) != string(p.data[start:p.pos]) {
		p.loose++
	}
}

func (p *parser) value(depth int) (*Node, error) {
	if p.pos >= len(p.data) {
		return nil, p.fail(ErrSyntax, "unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.stringValue()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return &trueNode, p.literal("true")
	case c == 'f':
		return &falseNode, p.literal("false")
	case c == 'n':
		return &nullNode, p.literal("null")
	default:
		return nil, p.fail(ErrSyntax, "expected a value, found %s", p.found())
	}
}

// found describes the input at the current position for a message: a
// printable ASCII character in quotes, another character by its code
// point, a byte that is not UTF-8 by its value, or the end of the input.
func (p *parser) found() string {
	if p.pos >= len(p.data) {
		return "the end of the input"
	}
	c := p.data[p.pos]
	if c >= 0x20 && c < 0x7F {
		return "'" + string(c) + "'"
	}
	r, size := utf8.DecodeRune(p.data[p.pos:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("byte 0x%02X", c)
	}
	return fmt.Sprintf("%U", r)
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.fail(ErrSyntax, "invalid literal, expected %s", word)
	}
	p.pos += len(word)
	return nil
}

func (p *parser) object(depth int) (*Node, error) {
	if depth > p.maxDepth {
		return nil, p.fail(ErrTooDeep, "more than %d nested containers", p.maxDepth)
	}
	start, loose := p.pos, p.loose
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return &emptyObject.Node, nil
	}
	base, extra := len(p.members), 0
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail(ErrSyntax, "expected a member name, found %s", p.found())
		}
		at := p.pos
		raw, escaped, err := p.string()
		if err != nil {
			return nil, err
		}
		var name string
		if escaped {
			name = string(raw)
			extra += nameExtra(name)
			p.canonical(at, raw)
		} else {
			name = p.name(raw)
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail(ErrSyntax, "expected ':' after a member name, found %s", p.found())
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.members = append(p.members, member{Key: name, Value: v})
		p.at = append(p.at, at)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail(ErrSyntax, "unexpected end of input in object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			if n := p.packObject(start, loose, depth, base); n != nil {
				clear(p.members[base:])
				p.members, p.at = p.members[:base], p.at[:base]
				return n, nil
			}
			n, err := p.closeObject(base, extra)
			clear(p.members[base:])
			p.members, p.at = p.members[:base], p.at[:base]
			return n, err
		default:
			return nil, p.fail(ErrSyntax, "expected ',' or '}' in an object, found %s", p.found())
		}
	}
}

// packObject returns the object of the members from base on packed, as
// pack does, when their names are distinct.
func (p *parser) packObject(start, loose, depth, base int) *Node {
	if !p.packable(start, loose, depth) {
		return nil
	}
	ms := p.members[base:]
	deepest := 0
	for i := range ms {
		for j := range i {
			if ms[j].Key == ms[i].Key {
				return nil // closeObject reports it
			}
		}
		deepest = max(deepest, ms[i].Value.Depth())
	}
	return newPacked(unsafe.String(&p.data[start], p.pos-start), len(ms), deepest+1)
}

// closeObject makes the object of the members from base on.
func (p *parser) closeObject(base, extra int) (*Node, error) {
	m, ok := persist.MapOf[*Node, summary, memberMeasure](p.members[base:]...)
	if !ok {
		// Report the first member whose name came before.
		seen := make(map[string]bool, len(p.members)-base)
		for i, v := range p.members[base:] {
			if seen[v.Key] {
				p.pos = p.at[base+i]
				return nil, p.fail(ErrDuplicateName, "member %s appears twice", Quote(v.Key))
			}
			seen[v.Key] = true
		}
	}
	return newObject(m, extra), nil
}

// chunkMax is the most elements of one array that the parser's stack
// holds: a longer array goes to a persist.Builder in runs of chunkMax, so
// that the stack stays small.
const chunkMax = 1 << 12

func (p *parser) array(depth int) (*Node, error) {
	if depth > p.maxDepth {
		return nil, p.fail(ErrTooDeep, "more than %d nested containers", p.maxDepth)
	}
	start, loose := p.pos, p.loose
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return &emptyArray.Node, nil
	}
	base := len(p.elems)
	var long *persist.Builder[*Node, summary, elemMeasure] // for arrays of more than chunkMax
	for {
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.elems = append(p.elems, v)
		if len(p.elems)-base == chunkMax {
			if long == nil {
				long = new(persist.Builder[*Node, summary, elemMeasure])
			}
			long.Add(p.elems[base:]...)
			clear(p.elems[base:])
			p.elems = p.elems[:base]
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail(ErrSyntax, "unexpected end of input in array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			es := p.elems[base:]
			if long == nil {
				if n := p.pack(start, loose, depth, es); n != nil {
					clear(es)
					p.elems = p.elems[:base]
					return n, nil
				}
			}
			var s elems
			if long != nil {
				long.Add(es...)
				s = long.Seq()
			} else {
				s = persist.SeqOf[*Node, summary, elemMeasure](es...)
			}
			n := newArray(s)
			clear(p.elems[base:])
			p.elems = p.elems[:base]
			return n, nil
		default:
			return nil, p.fail(ErrSyntax, "expected ',' or ']' in an array, found %s", p.found())
		}
	}
}

// number scans the RFC 8259 section 6 grammar and keeps the literal text.
func (p *parser) number() (*Node, error) {
	start := p.pos
	d := p.data
	if d[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(d) && d[p.pos] == '0':
		p.pos++
		if p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			return nil, p.fail(ErrSyntax, "invalid number: a leading zero")
		}
	case p.pos < len(d) && d[p.pos] >= '1' && d[p.pos] <= '9':
		p.digits()
	default:
		return nil, p.fail(ErrSyntax, "invalid number: expected a digit, found %s", p.found())
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return nil, p.fail(ErrSyntax, "invalid number: no digits after '.'")
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return nil, p.fail(ErrSyntax, "invalid number: no digits in exponent")
		}
	}
	lit := d[start:p.pos]
	if n := smallInt(lit); n != nil {
		return n, nil
	}
	return p.shared(Number, lit, len(lit)), nil
}

func (p *parser) digits() int {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos - start
}

// stringValue reads a string literal as a value.
func (p *parser) stringValue() (*Node, error) {
	start := p.pos
	raw, escaped, err := p.string()
	if err != nil {
		return nil, err
	}
	if escaped {
		p.canonical(start, raw)
	}
	if len(raw) <= 1 && (len(raw) == 0 || raw[0] < 128) {
		return sharedString(string(raw)), nil
	}
	size := len(raw) + 2
	if escaped {
		size = StringSize(string(raw))
	}
	return p.shared(String, raw, size), nil
}

// string reads a string literal and returns its decoded text, which is
// valid until the next call, and whether it had escapes. Escaped lone
// surrogates are kept as their WTF-8 bytes so that they encode back to the
// same escape.
func (p *parser) string() (text []byte, escaped bool, err error) {
	p.pos++ // opening quote
	start := p.pos
	d := p.data
	// Fast path: no escapes. Runs of plain ASCII are skipped eight bytes
	// at a time; each other byte is looked at alone.
	var high byte // the bits of every byte: ASCII when its top bit is clear
	for p.pos < len(d) {
		p.pos += plainRun(d[p.pos:])
		if p.pos == len(d) {
			break
		}
		c := d[p.pos]
		if c == '"' {
			s := d[start:p.pos]
			if high >= utf8.RuneSelf && !utf8.Valid(s) {
				return nil, false, p.fail(ErrSyntax, "invalid UTF-8 in string")
			}
			p.pos++
			return s, false, nil
		}
		high |= c
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, false, p.fail(ErrSyntax, "control character in string")
		}
		p.pos++
	}
	if !utf8.Valid(d[start:p.pos]) {
		return nil, false, p.fail(ErrSyntax, "invalid UTF-8 in string")
	}
	buf := append([]byte(nil), d[start:p.pos]...)
	for p.pos < len(d) {
		c := d[p.pos]
		switch {
		case c == '"':
			p.pos++
			return buf, true, nil
		case c < 0x20:
			return nil, false, p.fail(ErrSyntax, "control character in string")
		case c == '\\':
			var err error
			if buf, err = p.escape(buf); err != nil {
				return nil, false, err
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(d[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, false, p.fail(ErrSyntax, "invalid UTF-8 in string")
			}
			buf = append(buf, d[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
	return nil, false, p.fail(ErrSyntax, "unterminated string")
}

// plainRun returns the length of the run of plain bytes that b starts
// with: ASCII, but not '"', '\\' or a control character. It reads b
// eight bytes at a time.
func plainRun(b []byte) int {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	n := len(b)
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		q, bs := w^(ones*'"'), w^(ones*'\\')
		// A byte's top bit is set in a term where the byte is zero (q
		// and bs: it was '"' or '\\'), below 0x20, or not ASCII. A term
		// may set it in a plain byte too, but only above one it set
		// rightly: a borrow moves up, never down.
		if m := ((q-ones)&^q | (bs-ones)&^bs | (w-ones*0x20)&^w | w) & tops; m != 0 {
			return n - len(b) + bits.TrailingZeros64(m)/8
		}
		b = b[8:]
	}
	for i, c := range b {
		if c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return n - len(b) + i
		}
	}
	return n
}

func (p *parser) escape(buf []byte) ([]byte, error) {
	d := p.data
	if p.pos+1 >= len(d) {
		return nil, p.fail(ErrSyntax, "unterminated escape")
	}
	c := d[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return nil, p.fail(ErrSyntax, "invalid \\u escape")
		}
		if utf16.IsSurrogate(r) && r < 0xDC00 && p.pos+1 < len(d) && d[p.pos] == '\\' && d[p.pos+1] == 'u' {
			save := p.pos
			p.pos += 2
			if r2, ok := p.hex4(); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
				return utf8.AppendRune(buf, utf16.DecodeRune(r, r2)), nil
			}
			p.pos = save
		}
		if utf16.IsSurrogate(r) {
			return appendWTF8(buf, r), nil
		}
		return utf8.AppendRune(buf, r), nil
	}
	p.pos--
	return nil, p.fail(ErrSyntax, "invalid escape: '\\' followed by %s", p.found())
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(v), true
}

// appendWTF8 appends the three-byte generalized UTF-8 form of a surrogate.
func appendWTF8(buf []byte, r rune) []byte {
	return append(buf, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
}
