// Tests of packDepth.

package aguistate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPackDepth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, event string
		want        int
		reason      string
	}{
		{"state delta", `{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":{"b":1}}]}`, 4, "operations are read at once"},
		{"activity delta", `{"type":"ACTIVITY_DELTA","messageId":"m","patch":[]}`, 4, "operations are read at once"},
		{"type written later", `{"delta":[{"op":"remove","path":"/a"}],"type":"STATE_DELTA"}`, 3, "only the head is looked at"},
		{"snapshot", `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a","role":"user","content":"hi"}]}`, 3, "messages are held"},
		{"short", `{}`, 3, "no type"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, packDepth([]byte(tt.event)), "%s: %s", tt.name, tt.reason)
	}
}
