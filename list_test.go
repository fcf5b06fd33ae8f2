// Tests of the message list: a model test against a slice and linear
// scans, and the cost of finding a tool call.

package aguistate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/aguistate/aguistate/internal/persist"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listModel applies the same random edits to a messageList and to a slice.
type listModel struct {
	rng   *rand.Rand
	l     messageList
	model []Message
	next  int
}

// callIDs are few, so that calls share ids across messages and within one.
var callIDs = []string{"c0", "c1", "c2", "\xffc3", "c4"}

// randomMessage returns a message with id (or none) of a random role, with
// random tool calls, some of them not calls at all. Ids that begin with the
// byte 0xFF are not text: the message is built, not parsed.
func (lm *listModel) randomMessage(id string) Message {
	roles := []string{roleAssistant, roleAssistant, roleTool, roleUser}
	lm.next++
	role := roles[lm.rng.IntN(len(roles))]
	var calls *jsonv.Node
	if k := lm.rng.IntN(4); k > 0 {
		elems := make([]*jsonv.Node, k)
		for c := range elems {
			switch lm.rng.IntN(6) {
			case 0:
				elems[c] = jsonv.NewNumber("7")
			case 1:
				elems[c] = jsonv.NewObjectOf([]string{"id"}, jsonv.NewNumber("5"))
			default:
				elems[c] = jsonv.NewObjectOf([]string{"id", "k"},
					jsonv.NewString(callIDs[lm.rng.IntN(len(callIDs))]), jsonv.NewNumber(fmt.Sprint(c)))
			}
		}
		calls = jsonv.NewArray(elems)
	}
	return messageOf(jsonv.NewObjectOf([]string{"id", "role", "n", "toolCalls"},
		optString(id, id != ""), jsonv.NewString(role), jsonv.NewNumber(fmt.Sprint(lm.next)), calls))
}

// freshID returns an id no message of the model has: sometimes one that
// begins with 0xFF, as the keys of messages without an id do.
func (lm *listModel) freshID() string {
	lm.next++
	switch lm.rng.IntN(8) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("\xff%d", lm.next)
	}
	return fmt.Sprintf("m%d", lm.next)
}

// step makes one random edit with owner o.
func (lm *listModel) step(o *persist.Owner) string {
	n := len(lm.model)
	switch op := lm.rng.IntN(10); {
	case n == 0 || op < 4:
		i := lm.rng.IntN(n + 1)
		m := lm.randomMessage(lm.freshID())
		lm.l.insert(o, i, m)
		lm.model = slices.Insert(lm.model, i, m)
		return fmt.Sprintf("insert %q at %d", m.id, i)
	case op < 6:
		i := lm.rng.IntN(n)
		lm.l.delete(o, i)
		lm.model = slices.Delete(lm.model, i, i+1)
		return fmt.Sprintf("delete %d", i)
	case op < 8:
		i := lm.rng.IntN(n)
		m := lm.randomMessage(lm.model[i].id)
		lm.l.set(o, i, m)
		lm.model[i] = m
		return fmt.Sprintf("set %d", i)
	default:
		// Change one call of a message, keeping its id, as tool call
		// events do; or append a call of an id no message holds.
		i := lm.rng.IntN(n)
		m := lm.model[i]
		calls := callsOf(m)
		if calls == nil || calls.Len() == 0 {
			return "no call to change"
		}
		if lm.rng.IntN(2) == 0 {
			lm.next++
			id := fmt.Sprintf("new%d", lm.next)
			call := jsonv.NewObjectOf([]string{"id"}, jsonv.NewString(id))
			m = messageOf(jsonv.WithMember(m.v, "toolCalls", jsonv.WithAppended(calls, call)))
			lm.l.setCall(o, i, m, id)
			lm.model[i] = m
			return fmt.Sprintf("append call %s to %d", id, i)
		}
		j := lm.rng.IntN(calls.Len())
		call := calls.Elem(j)
		if call.Kind() == jsonv.Object {
			call = jsonv.WithMember(call, "changed", jsonv.NewBool(true))
		}
		m = messageOf(jsonv.WithMember(m.v, "toolCalls", jsonv.WithElem(calls, j, call)))
		lm.l.setCall(o, i, m, "")
		lm.model[i] = m
		return fmt.Sprintf("change call %d of %d", j, i)
	}
}

// modelToolCall is the linear scan the index replaces: the first call with
// id in the messages, of an assistant message when assistant is true.
func modelToolCall(ms []Message, id string, assistant bool) (int, int, bool) {
	for mi, m := range ms {
		if assistant && m.role != roleAssistant {
			continue
		}
		calls := callsOf(m)
		if calls == nil {
			continue
		}
		for ci, c := range calls.All() {
			if c.Kind() != jsonv.Object {
				continue
			}
			if cid := c.Get("id"); cid != nil && cid.Kind() == jsonv.String && cid.Text() == id {
				return mi, ci, true
			}
		}
	}
	return -1, -1, false
}

// check compares the list with the model: order, size, lookups by id, the
// tool call index and afterTools.
func (lm *listModel) check(t *testing.T, l messageList, model []Message) {
	t.Helper()
	require.Equal(t, len(model), l.Len())
	got := l.Slice()
	size := 0
	for i, m := range model {
		require.Same(t, m.v, got[i].v, "message %d", i)
		size += m.v.Size()
		if m.id != "" {
			g, gi, ok := l.Get(m.id)
			require.True(t, ok, "Get(%q)", m.id)
			require.Equal(t, i, gi, "Get(%q)", m.id)
			require.Same(t, m.v, g.v)
		}
	}
	require.Equal(t, size, l.Size(), "Size")
	_, _, ok := l.Get("absent")
	require.False(t, ok)
	_, _, ok = l.Get("")
	require.False(t, ok, "a message without an id is not found by id")
	for _, id := range append(slices.Clone(callIDs), "new1", "absent") {
		for _, assistant := range []bool{false, true} {
			mi, ci, want := modelToolCall(model, id, assistant)
			r, ok := l.toolCall(id, assistant)
			require.Equal(t, want, ok, "toolCall(%q, %v)", id, assistant)
			if ok {
				require.Equal(t, mi, r.msg, "toolCall(%q, %v): message", id, assistant)
				require.Equal(t, ci, r.i, "toolCall(%q, %v): call", id, assistant)
				require.Same(t, model[mi].v, r.m.v)
			}
		}
	}
	for i := range model {
		want := i + 1
		for want < len(model) && model[want].role == roleTool {
			want++
		}
		require.Equal(t, want, l.afterTools(i), "afterTools(%d)", i)
	}
}

// TestMessageListModel applies random edits, persistent ones and batches,
// to lists of up to a few hundred messages, and checks each against the
// model; lists published earlier must not change.
func TestMessageListModel(t *testing.T) {
	t.Parallel()
	testMessageListModel(t, 1)
}

// TestMessageListModelCollisions runs the model test with a hash of tool
// call ids that collides often, so that the index keeps the entries of
// several ids under one key apart. It replaces callHash, so it is not
// parallel: the parallel tests run after it.
func TestMessageListModelCollisions(t *testing.T) {
	defer func(h func(string) uint64) { callHash = h }(callHash)
	callHash = func(id string) uint64 { return uint64(len(id)) << 1 }
	testMessageListModel(t, 2)
}

func testMessageListModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	lm := &listModel{rng: rng}
	type published struct {
		l     messageList
		model []Message
	}
	var pubs []published
	for round := range 60 {
		var o *persist.Owner
		if rng.IntN(2) == 0 {
			o = persist.NewOwner()
		}
		var log []string
		for range rng.IntN(40) + 10*(round%3) {
			log = append(log, lm.step(o))
		}
		if o != nil {
			o.Seal()
		}
		t.Run(fmt.Sprint(round), func(t *testing.T) { lm.check(t, lm.l, lm.model) })
		if t.Failed() {
			t.Fatalf("after %v", log)
		}
		pubs = append(pubs, published{lm.l, slices.Clone(lm.model)})
	}
	for _, p := range pubs {
		lm.check(t, p.l, p.model)
	}
	rebuilt := newMessageList(lm.model)
	lm.check(t, rebuilt, lm.model)
}

// TestMessageListSpecialIDs checks that ids beginning with the byte 0xFF,
// which the keys of messages without an id also begin with, are found by
// id, and that messages without an id are not.
func TestMessageListSpecialIDs(t *testing.T) {
	t.Parallel()
	var l messageList
	for _, id := range []string{"", "\xff1", "", "\xff\xff1", "1"} {
		l.insert(nil, l.Len(), messageOf(jsonv.NewObjectOf([]string{"id", "role"}, optString(id, id != ""), jsonv.NewString(roleUser))))
	}
	for i, id := range []string{"\xff1", "\xff\xff1", "1"} {
		m, pos, ok := l.Get(id)
		assert.True(t, ok, "id %q", id)
		assert.Equal(t, id, m.id)
		assert.Equal(t, []int{1, 3, 4}[i], pos)
	}
	assert.Equal(t, 5, l.Len())
}
