// Tests of the reconciler: MESSAGES_SNAPSHOT by id, with the per-role,
// self-revoking exception for activity and reasoning messages.

package aguistate

import (
	"fmt"
	"slices"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReconcile(t *testing.T) {
	t.Parallel()
	const (
		u1  = `{"id":"u1","role":"user","content":"hi"}`
		u1b = `{"id":"u1","role":"user","content":"hi!"}`
		a1  = `{"id":"a1","role":"assistant","content":"hello"}`
		x1  = `{"id":"x1","role":"activity","activityType":"PLAN","content":{}}`
		x2  = `{"id":"x2","role":"activity","activityType":"PLAN","content":{"s":2}}`
		r1  = `{"id":"r1","role":"reasoning","content":"thinking"}`
		r2  = `{"id":"r2","role":"reasoning","content":"more"}`
		nid = `{"role":"user","content":"from a run input, no id"}`
	)
	tests := []struct {
		name, reason     string
		held, snap, want []string
	}{
		{name: "replace in place", reason: "a held id keeps its position and takes the snapshot's message",
			held: []string{u1, a1}, snap: []string{a1, u1b}, want: []string{u1b, a1}},
		{name: "append unseen", reason: "new ids go at the end, in snapshot order",
			held: []string{u1}, snap: []string{u1, a1}, want: []string{u1, a1}},
		{name: "drop absent", reason: "a held message the snapshot does not carry is dropped",
			held: []string{u1, a1}, snap: []string{a1}, want: []string{a1}},
		{name: "keep activity and reasoning", reason: "a snapshot without a role's messages keeps the held ones of that role",
			held: []string{u1, x1, r1}, snap: []string{a1}, want: []string{x1, r1, a1}},
		{name: "activity revoked", reason: "a snapshot with an activity message declares the complete activity set; reasoning stays",
			held: []string{x1, r1, u1}, snap: []string{x2, u1}, want: []string{r1, u1, x2}},
		{name: "reasoning revoked", reason: "the exception is per role",
			held: []string{x1, r1}, snap: []string{r2}, want: []string{x1, r2}},
		{name: "held without id", reason: "a message without an id matches nothing in a snapshot and is dropped",
			held: []string{nid, u1}, snap: []string{u1}, want: []string{u1}},
		{name: "empty snapshot", reason: "everything goes but activity and reasoning",
			held: []string{u1, x1, a1, r1}, snap: nil, want: []string{x1, r1}},
	}
	// Each case runs on its own, where its edits are many and reconcile
	// makes a new list, and after 100 messages that both lists hold alike,
	// where it edits the held list: both must make the same list and
	// report the same changes.
	var pad []string
	for i := range 100 {
		pad = append(pad, fmt.Sprintf(`{"id":"p%d","role":"user","content":"same"}`, i))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reports [2][3][]string
			for k, prefix := range [][]string{nil, pad} {
				with := func(ms []string) []Message { return testMessages(t, append(slices.Clone(prefix), ms...)) }
				held, snap := with(tt.held), with(tt.snap)
				heldText := string(jsonv.Marshal(encodeMessages(held)))
				old := &view{messages: newMessageList(held), runView: &emptyRun}
				next := *old
				tx := &txn{old: old, next: &next, opts: &Options{}}
				tx.reconcile(snap)
				assert.Equal(t, string(jsonv.Marshal(encodeMessages(with(tt.want)))),
					string(jsonv.Marshal(encodeMessages(tx.next.messages.Slice()))), "%s (after %d messages)", tt.reason, len(prefix))
				assert.Equal(t, heldText, string(jsonv.Marshal(encodeMessages(old.messages.Slice()))), "the held list is not modified")
				reports[k] = [3][]string{tx.added, tx.replaced, tx.removed}
			}
			assert.Equal(t, reports[0], reports[1], "added, replaced and removed")
		})
	}
}

// TestMessagesSnapshotMalformed checks that messages that cannot be
// reconciled are fatal.
func TestMessagesSnapshotMalformed(t *testing.T) {
	held := `[{"id":"u1","role":"user","content":"hi"}]`
	var cases []eventCase
	for _, ev := range []string{
		`{"type":"MESSAGES_SNAPSHOT"}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":{}}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":[1]}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":[{"role":"user"}]}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"","role":"user"}]}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a"}]}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a","role":"user"},{"id":"a","role":"user"}]}`,
	} {
		cases = append(cases, eventCase{name: ev, reason: "not an array of messages with distinct ids and string roles",
			messages: held, events: []string{ev}, want: held, fatal: errMalformedMessages})
	}
	runEventCases(t, cases)
}

// testMessages decodes message objects for a test, ids optional.
func testMessages(t *testing.T, texts []string) []Message {
	t.Helper()
	ms := make([]*jsonv.Node, len(texts))
	for i, s := range texts {
		ms[i] = mustParse(t, s)
	}
	out, err := decodeMessages(jsonv.NewArray(ms), true)
	require.NoError(t, err)
	return out
}
