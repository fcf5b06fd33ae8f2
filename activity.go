// Activity messages: ACTIVITY_SNAPSHOT and ACTIVITY_DELTA.

package aguistate

import (
	"errors"
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// An activity message is client-side: {id, role: "activity", activityType,
// content (an object), subagentRunId?, metadata?}. It never travels to the
// producer.

// activitySnapshot applies ACTIVITY_SNAPSHOT. Its content is an object
// (else the event is malformed). A message with a new id is appended. When
// "replace" is true (the default), a held activity message keeps its other
// members and their order and takes the event's activityType, content and
// subagentRunId (removed when the event has none). When "replace" is false
// it keeps its content and takes only the event's metadata. A held message
// of another role is never replaced: the event is skipped (write rule).
func (t *txn) activitySnapshot(ev *jsonv.Node) error {
	f := eventFields(ev)
	id, typ, content := f.id("messageId"), f.of("activityType", jsonv.String), f.of("content", jsonv.Object)
	replacing, sub, meta := f.optBool("replace", true), f.opt("subagentRunId", jsonv.String), f.meta()
	if f.err != nil {
		return f.err
	}
	m, i, held := t.message(id)
	switch {
	case !held:
		v := t.mergeMetadata(jsonv.NewObjectOf([]string{"id", "role", "activityType", "content", "subagentRunId"},
			jsonv.NewString(id), jsonv.NewString(roleActivity), typ, content, sub), meta)
		t.appendMessage(Message{id: id, role: roleActivity, v: v})
	case !activityWriter.writes(m.role):
		t.wrongRole(activityWriter, m)
	default:
		v := m.v
		if replacing {
			v = t.with(t.with(v, "activityType", typ), "content", content)
			if sub != nil {
				v = t.with(v, "subagentRunId", sub)
			} else {
				v, _ = t.ed().RemoveMember(v, "subagentRunId")
			}
		}
		t.editMessage(i, m, t.mergeMetadata(v, meta))
	}
	return nil
}

// activityDelta applies ACTIVITY_DELTA: the RFC 6902 patch is applied to
// the activity message's content ({} when it has none), atomically, through
// the engine STATE_DELTA uses. A malformed patch is fatal (errMalformedPatch).
// A patch that fails to apply or makes content that is not an object, or a
// message that is not held or not an activity message, skips the event with
// a warning; it never marks the state diverged. On success the message
// takes the new content, the event's activityType and its metadata.
func (t *txn) activityDelta(ev *jsonv.Node) error {
	f := eventFields(ev)
	id, typ := f.id("messageId"), f.of("activityType", jsonv.String)
	if f.err != nil {
		return f.err
	}
	ops, err := decodePatch(ev.Get("patch"), t.opts.messageLimits())
	if err != nil {
		return err
	}
	meta := f.meta()
	if f.err != nil {
		return f.err
	}
	m, i, ok := t.target(activityWriter, id)
	if !ok {
		return nil
	}
	content := m.v.Get("content")
	if content == nil || content.Kind() == jsonv.Null {
		content = jsonv.NewObject(nil, nil)
	}
	content, err = applyPatch(content, ops, t.opts.messageLimits())
	if errors.Is(err, ErrLimit) {
		return err
	}
	if err == nil && content.Kind() != jsonv.Object {
		err = fmt.Errorf("%w: the activity content would be %s, not an object", ErrPatchFailed, content.Kind().Phrase())
	}
	if err != nil {
		t.warn = err
		return nil
	}
	v := t.with(t.mergeMetadata(m.v, meta), "content", content)
	t.editMessage(i, m, t.with(v, "activityType", typ))
	return nil
}
