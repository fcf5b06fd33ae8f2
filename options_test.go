// Tests of Options: defaults and the copy a Consumer keeps.

package aguistate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	want := Options{MaxEventSize: 16 << 20, MaxDepth: 1000, MaxPatchOps: 10_000,
		MaxStateSize: 64 << 20, MaxMessages: 10_000, MaxMessageSize: 8 << 20,
		MaxTotalMessageSize: 64 << 20, MaxChunkLanes: 64, MaxScopeSize: 4 << 20, MaxGapSize: 64 << 10}
	assert.Equal(t, want, New(nil).opts, "nil means the defaults")
	assert.Equal(t, want, New(&Options{MaxDepth: -1}).opts, "a negative limit takes its default")
	got := New(&Options{MaxDepth: 5}).opts
	assert.Equal(t, 5, got.MaxDepth, "a set limit is kept")
	assert.Equal(t, want.MaxEventSize, got.MaxEventSize, "the others take their defaults")
}

func TestOptionsAreCopied(t *testing.T) {
	t.Parallel()
	opts := &Options{MaxMessages: 1}
	c := New(opts)
	opts.MaxMessages = 100
	assert.ErrorIs(t, c.Apply([]byte(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a","role":"user"},{"id":"b","role":"user"}]}`)),
		ErrLimit, "changing the caller's struct afterwards has no effect")
	assert.Equal(t, 100, opts.MaxMessages, "the caller's struct is not changed")
}
