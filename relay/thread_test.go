// Tests of a thread's helpers: the type of an event, read as a Consumer reads it.

package relay

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEventType reads the type of events whose "type" is written in
// every way a Consumer takes it, beside members whose names differ from
// "type" only in case (which encoding/json would take for it): eventType
// and endsRun must agree with the Consumer, or a viewer's stream ends in
// the middle of a run, or never ends, and a run's record is lost.
func TestEventType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		event, typ   string
		ends         bool
	}{
		{"plain", "the common case", `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`, "RUN_FINISHED", true},
		{"error", "RUN_ERROR ends a run too", `{"type":"RUN_ERROR","message":"m"}`, "RUN_ERROR", true},
		{"text", "no end", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"RUN_FINISHED"}`, "TEXT_MESSAGE_CONTENT", false},
		{"escaped", "an escape in the type is the same string", `{"type":"RUN\u005fFINISHED","threadId":"t","runId":"r"}`, "RUN_FINISHED", true},
		{"escaped error", "an escape in the type is the same string", `{"type":"\u0052UN_ERROR","message":"m"}`, "RUN_ERROR", true},
		{"other case after", "a member Type is not the type", `{"type":"TEXT_MESSAGE_START","messageId":"m","Type":"RUN_FINISHED"}`, "TEXT_MESSAGE_START", false},
		{"other case before", "a member TYPE is not the type", `{"TYPE":"RUN_STARTED","type":"TEXT_MESSAGE_START","messageId":"m"}`, "TEXT_MESSAGE_START", false},
		{"end hidden", "a member Type does not hide the end", `{"type":"RUN_FINISHED","threadId":"t","runId":"r","Type":"x"}`, "RUN_FINISHED", true},
		{"nested", "a type inside a member is not the event's", `{"input":{"type":"RUN_FINISHED"},"type":"RUN_STARTED","threadId":"t","runId":"r"}`, "RUN_STARTED", false},
		{"no JSON", "nothing", `RUN_FINISHED`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.typ, eventType([]byte(tt.event)), tt.reason)
			assert.Equal(t, tt.ends, endsRun([]byte(tt.event)), tt.reason)
		})
	}
}
