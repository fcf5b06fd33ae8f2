// Tests of composing the thread: the message constructors, AddMessages,
// SetState and PatchState as local changes.

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

// TestConstructors checks each constructor's message, member for member.
func TestConstructors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		m            Message
		want         string
	}{
		{"user", "text content", UserMessage("hi <b>"), `{"id":"ID","role":"user","content":"hi <b>"}`},
		{"user parts", "text first, then each part with its source",
			UserMessage("see", Part{Type: "image", Source: "data", Value: "iVBORw0KGgo=", MIMEType: "image/png"},
				Part{Type: "document", Source: "file", Value: "file-1"}, Part{Type: "audio", Source: "url", Value: "https://x/a.mp3"}, Part{Type: "text", Text: "!"}),
			`{"id":"ID","role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"data","value":"iVBORw0KGgo=","mimeType":"image/png"}},` +
				`{"type":"document","source":{"type":"file","value":"file-1"}},{"type":"audio","source":{"type":"url","value":"https://x/a.mp3"}},{"type":"text","text":"!"}]}`},
		{"user parts only", "no empty text part", UserMessage("", Part{Type: "video", Source: "url", Value: "https://x/v"}),
			`{"id":"ID","role":"user","content":[{"type":"video","source":{"type":"url","value":"https://x/v"}}]}`},
		{"system", "", SystemMessage("be brief"), `{"id":"ID","role":"system","content":"be brief"}`},
		{"developer", "", DeveloperMessage("debug"), `{"id":"ID","role":"developer","content":"debug"}`},
		{"assistant", "", AssistantMessage("ok"), `{"id":"ID","role":"assistant","content":"ok"}`},
		{"tool", "the result names its call", ToolMessage("c1", `{"t":20}`), `{"id":"ID","role":"tool","content":"{\"t\":20}","toolCallId":"c1"}`},
		{"tool parts", "AG-UI 1.0: a tool result may be content parts",
			ToolMessage("c1", "the chart", Part{Type: "image", Source: "url", Value: "https://x/c.png", MIMEType: "image/png"}),
			`{"id":"ID","role":"tool","content":[{"type":"text","text":"the chart"},{"type":"image","source":{"type":"url","value":"https://x/c.png","mimeType":"image/png"}}],"toolCallId":"c1"}`},
	}
	uuid4 := regexp.MustCompile(`"id":"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := tt.m.MarshalJSON()
			require.NoError(t, err)
			assert.Regexp(t, uuid4, string(out), "an id is generated")
			assert.Equal(t, tt.want, uuid4.ReplaceAllString(string(out), `"id":"ID"`), tt.reason)
			assert.Equal(t, `"id":"`+tt.m.ID()+`"`, uuid4.FindString(string(out)), "ID() is the id sent")
			given := tt.m.WithID("mine")
			out, err = given.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, strings.Replace(tt.want, `"id":"ID"`, `"id":"mine"`, 1), string(out), "WithID keeps the id's place")
			assert.Equal(t, "mine", given.ID())
			assert.NotEqual(t, "mine", tt.m.ID(), "WithID returns a new message")
		})
	}
	assert.NotEqual(t, UserMessage("a").ID(), UserMessage("a").ID(), "each message gets its own id")
}

// TestConstructorErrors checks that a message that cannot be made is an
// error where it is added or marshalled, never null.
func TestConstructorErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    Message
		want string
	}{
		{"unknown part type", UserMessage("x", Part{Type: "gif"}), `part type "gif" is not one of`},
		{"no source", UserMessage("x", Part{Type: "image", Value: "v"}), `image part: source "" is not one of url, data and file`},
		{"no value", UserMessage("x", Part{Type: "image", Source: "url"}), "image part: the value is empty"},
		{"data without MIME type", UserMessage("x", Part{Type: "audio", Source: "data", Value: "AAA="}), "audio part: data needs a MIME type"},
		{"tool without call id", ToolMessage("", "r"), "the tool call id is empty"},
		{"tool with a bad part", ToolMessage("c1", "r", Part{Type: "image", Source: "url"}), "ToolMessage: part 0: image part: the value is empty"},
		{"empty WithID", SystemMessage("s").WithID(""), "the id is empty"},
		{"WithID keeps the first error", ToolMessage("", "r").WithID("x"), "the tool call id is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.m.MarshalJSON()
			assert.ErrorContains(t, err, tt.want)
			c := New(nil)
			err = c.AddMessages(UserMessage("fine"), tt.m)
			assert.ErrorContains(t, err, "message 1: ")
			assert.ErrorContains(t, err, tt.want)
			assert.Empty(t, c.Messages(), "nothing is added")
		})
	}
}

// TestAddMessages checks the rules of AddMessages and that it is one local
// change, reported with the zero Event.
func TestAddMessages(t *testing.T) {
	t.Parallel()
	c := New(&Options{MaxMessages: 3})
	var changes []Change
	c.Subscribe(func(ch Change) { changes = append(changes, ch) })
	require.NoError(t, c.AddMessages(SystemMessage("s").WithID("s1"), UserMessage("u").WithID("u1")))
	require.Len(t, changes, 1, "one change for the call")
	assert.Equal(t, Change{Added: []string{"s1", "u1"}}, changes[0], "a local change: the zero Event")
	assert.Equal(t, 0, c.cur.Load().events, "a local change is not an event")

	before := snapshot(c)
	for _, tc := range []struct {
		name string
		ms   []Message
		want string
	}{
		{"held id", []Message{UserMessage("again").WithID("u1")}, `the thread holds a message with the id "u1"`},
		{"twice in the call", []Message{UserMessage("a").WithID("x"), UserMessage("b").WithID("x")}, `message 1: the thread holds a message with the id "x"`},
		{"no id", []Message{mustMessage(t, `{"role":"user","content":"no id"}`)}, "it has no id"},
		{"zero", []Message{{}}, "the zero Message"},
	} {
		err := c.AddMessages(tc.ms...)
		assert.ErrorContains(t, err, tc.want, tc.name)
		assert.Equal(t, before, snapshot(c), "%s: nothing is added", tc.name)
	}
	err := c.AddMessages(UserMessage("a"), UserMessage("b"))
	assert.ErrorIs(t, err, ErrLimit, "MaxMessages holds for local changes")
	assert.Equal(t, before, snapshot(c))
	assert.Len(t, changes, 1, "a refused change is not reported")
}

// TestSetState checks SetState's inputs, its checks, and its Change.
func TestSetState(t *testing.T) {
	t.Parallel()
	var v Value
	require.NoError(t, json.Unmarshal([]byte(`{"n":12345678901234567890}`), &v))
	tests := []struct {
		name, reason string
		state        any
		want         string
	}{
		{"value", "a Value is kept exactly", v, `{"n":12345678901234567890}`},
		{"raw", "JSON text goes in as json.RawMessage", json.RawMessage(`[1.50, {"a":null}]`), `[1.50,{"a":null}]`},
		{"bytes", "a []byte is JSON text too, not a base64 string", []byte(`{"a":[1.50]}`), `{"a":[1.50]}`},
		{"struct", "any value encoding/json marshals", struct {
			Title string `json:"title"`
		}{"Pasta"}, `{"title":"Pasta"}`},
		{"scalar", "state is any JSON value", "done", `"done"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(nil)
			var changes []Change
			c.Subscribe(func(ch Change) { changes = append(changes, ch) })
			require.NoError(t, c.SetState(tt.state))
			assert.Equal(t, tt.want, c.State().String(), tt.reason)
			require.Len(t, changes, 1)
			assert.True(t, changes[0].StateChanged)
			assert.Equal(t, "", changes[0].Event.Type, "a local change")
			require.NoError(t, c.SetState(tt.state))
			assert.Len(t, changes, 1, "an equal state is no change to report")
		})
	}

	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		c := New(&Options{MaxDepth: 3, ValidateState: func(s Value) error {
			if s.String() == `"bad"` {
				return errors.New("no")
			}
			return nil
		}})
		assert.ErrorIs(t, c.SetState("bad"), ErrStateRejected)
		assert.ErrorIs(t, c.SetState(json.RawMessage(`[[[[1]]]]`)), ErrLimit)
		assert.ErrorContains(t, c.SetState(func() {}), "SetState: json: unsupported type")
		assert.ErrorContains(t, c.SetState([]byte("aGk=")), "SetState: json:", "a []byte that is not JSON text")
		assert.Equal(t, `{}`, c.State().String(), "nothing changed")
	})
}

// TestPatchState checks that a local patch follows a STATE_DELTA's rules
// but returns its failure, and changes nothing then.
func TestPatchState(t *testing.T) {
	t.Parallel()
	c := New(nil)
	require.NoError(t, c.SetState(json.RawMessage(`{"todo":["a"],"n":1}`)))
	require.NoError(t, c.PatchState(json.RawMessage(`[{"op":"add","path":"/todo/-","value":"b"},{"op":"replace","path":"/n","value":2}]`)))
	assert.Equal(t, `{"todo":["a","b"],"n":2}`, c.State().String())

	for _, tc := range []struct {
		name, patch string
		want        error
	}{
		{"malformed", `[{"op":"merge","path":"/n"}]`, ErrMalformedEvent},
		{"fails to apply", `[{"op":"replace","path":"/n","value":3},{"op":"remove","path":"/missing"}]`, ErrPatchFailed},
		{"not JSON", `[{`, ErrMalformedEvent},
	} {
		err := c.PatchState(json.RawMessage(tc.patch))
		assert.ErrorIs(t, err, tc.want, tc.name)
		var pe *PatchError
		if tc.name != "not JSON" {
			assert.ErrorAs(t, err, &pe, tc.name)
		}
		assert.Equal(t, `{"todo":["a","b"],"n":2}`, c.State().String(), "%s: all or nothing", tc.name)
		assert.False(t, c.Diverged(), "a local patch that fails does not diverge the state")
	}
}

// TestStartRunReports checks that StartRun reports what it changed as a
// local change, and records the thread and run ids.
func TestStartRunReports(t *testing.T) {
	t.Parallel()
	c := New(nil)
	var changes []Change
	c.Subscribe(func(ch Change) { changes = append(changes, ch) })
	require.NoError(t, startRun(c, `{"threadId":"t1","runId":"r1","state":{"a":1},"messages":[{"id":"u1","role":"user","content":"hi"}]}`))
	require.Len(t, changes, 1)
	assert.Equal(t, Change{StateChanged: true, Added: []string{"u1"}}, changes[0])
	assert.Equal(t, "t1", c.ThreadID())
	assert.Equal(t, "r1", c.RunID())
	require.NoError(t, startRun(c, `{"threadId":"t1","runId":"r2","state":{"a":1}}`))
	assert.Len(t, changes, 1, "nothing changed: nothing reported")
	assert.Equal(t, "r2", c.RunID())
}

// TestStartRunEndsDivergence checks that a run input's state ends
// divergence, and that subscribers learn it even when the state is equal.
func TestStartRunEndsDivergence(t *testing.T) {
	t.Parallel()
	c := New(nil)
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/missing"}]}`)))
	require.True(t, c.Diverged())
	var changes []Change
	c.Subscribe(func(ch Change) { changes = append(changes, ch) })
	require.NoError(t, c.StartRun(c.NextInput(nil)))
	assert.False(t, c.Diverged(), "the agent starts from the state it was sent")
	require.Len(t, changes, 1)
	assert.Equal(t, Change{}, changes[0], "the zero Event, nothing but the flag changed")
}
