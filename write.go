// The write rule: which events may change a held message of which role.

package aguistate

import (
	"slices"
	"strings"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// writer is a family of events that change held messages.
type writer uint8

const (
	textWriter       writer = iota // TEXT_MESSAGE_START, _CONTENT, _END and TEXT_MESSAGE_CHUNK
	reasoningWriter                // REASONING_MESSAGE_START, _CONTENT, _END and REASONING_MESSAGE_CHUNK
	toolCallWriter                 // TOOL_CALL_START, _ARGS, _END and TOOL_CALL_CHUNK, in the message that holds the call
	toolResultWriter               // TOOL_CALL_RESULT
	activityWriter                 // ACTIVITY_SNAPSHOT and ACTIVITY_DELTA
	encryptedWriter                // REASONING_ENCRYPTED_VALUE of subtype "message"
)

// writeRule is the write rule: for each family of events, the roles of the
// held messages that its events may change. An event that names a held
// message of another role is skipped with an ErrNoTarget warning, and the
// message stays as it is. MESSAGES_SNAPSHOT and a run's input are not in
// it: they restate messages of any role. A role this package does not know
// is written only by them.
var writeRule = [...]struct {
	events string   // the family, as a message names it
	roles  []string // the roles its events may change
}{
	textWriter:       {"text message events", []string{roleAssistant, roleUser, roleSystem, roleDeveloper}},
	reasoningWriter:  {"reasoning message events", []string{roleReasoning}},
	toolCallWriter:   {"tool call events", []string{roleAssistant}},
	toolResultWriter: {"tool call results", []string{roleTool}},
	activityWriter:   {"activity events", []string{roleActivity}},
	encryptedWriter:  {"encrypted values", []string{roleAssistant, roleUser, roleSystem, roleDeveloper, roleTool, roleReasoning}},
}

// writes reports whether events of family w may change a message of role.
func (w writer) writes(role string) bool { return slices.Contains(writeRule[w].roles, role) }

// target returns the held message id, which an event of family w changes,
// and its position. It skips the event with an ErrNoTarget warning when no
// message has the id, or when the message has a role that w does not write.
func (t *txn) target(w writer, id string) (Message, int, bool) {
	m, i, held := t.message(id)
	switch {
	case !held:
		t.noTarget("no message %s", quoted(id))
	case !w.writes(m.role):
		t.wrongRole(w, m)
	default:
		return m, i, true
	}
	return Message{}, -1, false
}

// wrongRole skips the event with a warning that names the role of the
// held message m and the roles that w writes.
func (t *txn) wrongRole(w writer, m Message) {
	t.noTarget("message %s has the role %s, and %s write only into %s messages",
		quoted(m.id), quoted(m.role), writeRule[w].events, writerRoles(w))
}

// writerRoles shows in a warning the roles that a family writes, as
// quotedList does, when the warning is read.
type writerRoles writer

func (w writerRoles) String() string { return quotedList(writeRule[w].roles) }

// quotedList returns `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
func quotedList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = jsonv.Quote(s)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
