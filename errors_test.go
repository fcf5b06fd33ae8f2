// Tests of the error voice: one prefix, articles, long values cut short,
// causes kept in the chain, and the sentinels each failure matches.

package aguistate

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// publicErrors returns one error from every exported way to fail, each
// with what it must match.
func publicErrors(t *testing.T) []struct {
	name string
	err  error
	is   error
} {
	t.Helper()
	apply := func(events ...string) error {
		c := New(nil)
		var err error
		for _, ev := range events {
			err = c.Apply([]byte(ev))
		}
		return err
	}
	warning := func(events ...string) error {
		c := New(nil)
		var w error
		c.Subscribe(func(ch Change) { w = ch.Warning })
		for _, ev := range events {
			require.NoError(t, c.Apply([]byte(ev)))
		}
		return w
	}
	readEvents := func(stream string) error {
		for _, err := range ReadEvents(strings.NewReader(stream), nil) {
			if err != nil {
				return err
			}
		}
		return nil
	}
	var v Value
	var m Message
	var in RunAgentInput
	_, restoreErr := Restore([]byte(`{"format":"x"}`), nil)
	_, zeroMessage := Message{}.MarshalJSON()
	pending := New(nil)
	require.NoError(t, pending.Apply([]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"x"}]}}`)))
	_, resumeErr := pending.Resume(func(Value) (any, bool) { return func() {}, true })
	busy := New(nil)
	busy.streaming.Store(true) // as RunAgent claims it
	_, busyErr := busy.RunAgent(t.Context(), &Agent{URL: "http://127.0.0.1:1"}, nil)
	named := New(nil)
	require.NoError(t, named.StartRun(RunAgentInput{ThreadID: "t"}))
	_, mismatchErr := named.RunAgent(t.Context(), &Agent{URL: "http://127.0.0.1:1"}, &RunOptions{ThreadID: "other"})
	return []struct {
		name string
		err  error
		is   error
	}{
		{"invalid JSON", apply(`{"type":`), ErrMalformedEvent},
		{"not an object", apply(`[1]`), ErrMalformedEvent},
		{"malformed patch", apply(`{"type":"STATE_DELTA","delta":[{"op":"merge","path":"/a"}]}`), ErrMalformedEvent},
		{"malformed messages", apply(`{"type":"MESSAGES_SNAPSHOT","messages":[true]}`), ErrMalformedEvent},
		{"mistyped field", apply(`{"type":"RUN_STARTED","threadId":[],"runId":"r"}`), ErrMalformedEvent},
		{"limit", New(&Options{MaxEventSize: 8}).Apply([]byte(`{"type":"CUSTOM"}`)), ErrLimit},
		{"patch failed", warning(`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/a"}]}`), ErrPatchFailed},
		{"no target", warning(`{"type":"TEXT_MESSAGE_END","messageId":"m"}`), ErrNoTarget},
		{"start run", startRun(New(nil), `{"threadId":5}`), ErrMalformedEvent},
		{"restore", restoreErr, nil},
		{"decode", Value{}.Decode("/a", &v), nil},
		{"value", v.UnmarshalJSON([]byte(`{`)), nil},
		{"message", m.UnmarshalJSON([]byte(`{"role":1}`)), ErrMalformedEvent},
		{"run input", in.UnmarshalJSON([]byte(`{"messages":{}}`)), ErrMalformedEvent},
		{"framing", readEvents(`[{},]`), ErrMalformedEvent},
		{"framing limit", readEvents("data: " + strings.Repeat("x", 17<<20) + "\n\n"), ErrLimit},
		{"cut short", readEvents(`{"type":"A"}` + "\n" + `{"type":`), nil},
		{"zero message", zeroMessage, nil},
		{"add messages", New(nil).AddMessages(UserMessage("x", Part{Type: "image"})), nil},
		{"set state", New(&Options{MaxDepth: 1}).SetState([]any{[]any{1}}), ErrLimit},
		{"patch state", New(nil).PatchState([]byte(`[{"op":"remove","path":"/a"}]`)), ErrPatchFailed},
		{"unanswered interrupt", pending.StartRun(RunAgentInput{}), nil},
		{"resume", resumeErr, nil},
		{"run in progress", busyErr, ErrRunInProgress},
		{"thread mismatch", mismatchErr, ErrThreadMismatch},
		{"run error", &RunError{Message: "boom", Code: "E1"}, nil},
		{"http content type", &HTTPError{StatusCode: 200, Status: "200 OK", ContentType: "text/html", Body: "<html>"}, nil},
	}
}

// TestErrorVoice checks that every error a caller can get begins with
// "aguistate: " once and uses the articles right.
func TestErrorVoice(t *testing.T) {
	t.Parallel()
	badArticle := regexp.MustCompile(`\ba (array|object|true|false|"|null)\b|a boolean or a boolean`)
	for _, tc := range publicErrors(t) {
		require.Error(t, tc.err, tc.name)
		text := tc.err.Error()
		assert.True(t, strings.HasPrefix(text, "aguistate: "), "%s: %q", tc.name, text)
		assert.Equal(t, 1, strings.Count(text, "aguistate: "), "%s: the prefix once: %q", tc.name, text)
		assert.False(t, badArticle.MatchString(text), "%s: %q", tc.name, text)
		if tc.is != nil {
			assert.ErrorIs(t, tc.err, tc.is, tc.name)
		}
		for _, s := range []error{ErrMalformedEvent, ErrLimit, ErrPatchFailed, ErrNoTarget, ErrStateRejected, ErrRunInProgress, ErrThreadMismatch} {
			if s != tc.is {
				assert.NotErrorIs(t, tc.err, s, "%s matches one sentinel at most", tc.name)
			}
		}
	}
}

// TestLongValuesAreCutShort checks that a message quotes a long value cut
// short, not whole: a 1 MiB path or id makes a message of a few hundred
// bytes.
func TestLongValuesAreCutShort(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 1<<19) // 1 MiB, two bytes a character
	var warn error
	c := New(nil)
	c.Subscribe(func(ch Change) { warn = ch.Warning })
	tests := []struct {
		name, event string
		fatal       bool
	}{
		{"path", `{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/` + long + `"}]}`, false},
		{"from", `{"type":"STATE_DELTA","delta":[{"op":"move","from":"/` + long + `","path":"/a"}]}`, false},
		{"op", `{"type":"STATE_DELTA","delta":[{"op":"` + long + `","path":"/a"}]}`, true},
		{"message id", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"` + long + `","delta":"x"}`, false},
	}
	for _, tt := range tests {
		warn = nil
		err := c.Apply([]byte(tt.event))
		if !tt.fatal {
			require.NoError(t, err, tt.name)
			err = warn
		}
		require.Error(t, err, tt.name)
		assert.Less(t, len(err.Error()), 400, "%s: %.200s", tt.name, err)
		assert.Contains(t, err.Error(), "bytes)", "%s: the length is given", tt.name)
		assert.True(t, strings.ToValidUTF8(err.Error(), "?") == err.Error(), "%s: cut between characters", tt.name)
	}
}

// TestFramingKeepsTheCause checks that a broken JSON array stream's error
// keeps encoding/json's *json.SyntaxError in its chain.
func TestFramingKeepsTheCause(t *testing.T) {
	t.Parallel()
	var err error
	for _, e := range ReadEvents(strings.NewReader(`[{"a" 1}]`), nil) {
		err = e
	}
	var se *json.SyntaxError
	require.ErrorAs(t, err, &se)
	var ee *EventError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.Position)
	assert.ErrorIs(t, err, ErrMalformedEvent)
}

// TestPatchErrorForm checks the form of a PatchError's text.
func TestPatchErrorForm(t *testing.T) {
	t.Parallel()
	cause := errors.New("cause")
	tests := []struct {
		err  PatchError
		want string
	}{
		{PatchError{Index: 2, Op: "remove", Path: "/a", Err: cause}, `operation 2 (remove "/a"): cause`},
		{PatchError{Index: 0, Op: "move", From: "/a", Path: "/b", Err: cause}, `operation 0 (move from "/a" to "/b"): cause`},
		{PatchError{Index: 1, Err: cause}, `operation 1: cause`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.err.Error())
		assert.Equal(t, cause, tt.err.Unwrap())
	}
}
