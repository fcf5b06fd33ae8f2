// Tests over the shared data in ../shared: the recorded streams, the semantics
// vectors, the RFC 6902 conformance suite.

package aguistate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedDifferences are the recorded streams whose result is not the
// reference client's, each for a row of the table of differences in docs/semantics.md:
// the warnings they give, and the messages (by id) held instead of the
// reference client's.
var sharedDifferences = map[string]struct {
	reason   string
	warnings []error
	messages map[string]string
}{
	"dart-messages-snapshot": {
		reason:   "write rule: the text events naming the multimodal user message msg_09 are skipped; the reference client replaces its content parts, the image included, with the assistant's text",
		warnings: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget},
		messages: map[string]string{"msg_09": `{"id":"msg_09","role":"user","content":[{"type":"text","text":"Describe this image"},` +
			`{"type":"image","source":{"type":"url","value":"https://example.com/image.png","mimeType":"image/png"}}]}`},
	},
}

// TestSharedStreams replays every real recorded stream of ../shared/streams
// from the reference client's starting value and requires no fatal error,
// no skipped event, and the reference client's state and messages (by
// value), except where sharedDifferences says otherwise.
func TestSharedStreams(t *testing.T) {
	dir := sharedDir(t, "streams")
	files, err := filepath.Glob(filepath.Join(dir, "*.*"))
	require.NoError(t, err)
	n := 0
	for _, file := range files {
		ext := filepath.Ext(file)
		if ext != ".sse" && ext != ".jsonl" {
			continue
		}
		n++
		name := strings.TrimSuffix(filepath.Base(file), ext)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var initial struct {
				State    json.RawMessage `json:"state"`
				Messages json.RawMessage `json:"messages"`
			}
			readJSON(t, filepath.Join(dir, "expected", name+".initial.json"), &initial)
			var expected struct {
				State    json.RawMessage   `json:"state"`
				Messages []json.RawMessage `json:"messages"`
			}
			readJSON(t, filepath.Join(dir, "expected", name+".json"), &expected)
			diff := sharedDifferences[name]
			for i, m := range expected.Messages {
				var id struct{ ID string }
				require.NoError(t, json.Unmarshal(m, &id))
				if ours, ok := diff.messages[id.ID]; ok {
					expected.Messages[i] = json.RawMessage(ours)
				}
			}
			wantMessages, err := json.Marshal(expected.Messages)
			require.NoError(t, err)

			c := New(nil)
			warnings := warningsOf(c)
			require.NoError(t, startRun(c, `{"state":`+string(initial.State)+`,"messages":`+string(initial.Messages)+`}`))
			f, err := os.Open(file)
			require.NoError(t, err)
			defer f.Close()
			require.NoError(t, c.Run(context.Background(), f), "replays with no fatal error")
			require.Len(t, warnings(), len(diff.warnings), "warnings %v; %s", warnings(), diff.reason)
			for i, w := range diff.warnings {
				assert.ErrorIs(t, warnings()[i], w, diff.reason)
			}
			assertJSONEqual(t, mustParse(t, string(expected.State)), c.State().node(), "state")
			assertJSONEqual(t, mustParse(t, string(wantMessages)), encodeMessages(c.Messages()), "messages", diff.reason)
		})
	}
	expected, err := filepath.Glob(filepath.Join(dir, "expected", "*.initial.json"))
	require.NoError(t, err)
	assert.Equal(t, len(expected), n, "every stream with an expected result is replayed")
	for name := range sharedDifferences {
		assert.FileExists(t, filepath.Join(dir, "expected", name+".json"), "a difference names a recorded stream")
	}
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v), path)
}

// vector is one file of ../shared/vectors (format in its README).
type vector struct {
	Name  string `json:"name"`
	About string `json:"about"`
	Input struct {
		State    json.RawMessage `json:"state"`
		Messages json.RawMessage `json:"messages"`
	} `json:"input"`
	Events []json.RawMessage `json:"events"`
	Expect struct {
		State    json.RawMessage `json:"state"`
		Messages json.RawMessage `json:"messages"`
		Skipped  int             `json:"skipped"`
		FatalAt  *int            `json:"fatalAt"`
	} `json:"expect"`
}

// TestVectors runs every shared semantics vector and requires the expected
// state, messages, skipped count and fatal position.
func TestVectors(t *testing.T) {
	dir := sharedDir(t, "vectors")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var v vector
		require.NoError(t, json.Unmarshal(data, &v))
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			skipped := 0
			c := New(nil)
			c.Subscribe(func(ch Change) {
				if ch.Warning != nil {
					assert.ErrorIs(t, ch.Warning, ErrPatchFailed)
					skipped++
				}
			})
			input := `{"state":` + string(v.Input.State) + `,"messages":` + string(v.Input.Messages) + `}`
			require.NoError(t, startRun(c, input))
			fatalAt := -1
			for i, ev := range v.Events {
				if err := c.Apply(ev); err != nil {
					var ee *EventError
					require.ErrorAs(t, err, &ee)
					assert.Equal(t, i+1, ee.Position, "position in the error")
					assert.True(t, errors.Is(err, ErrMalformedEvent) || errors.Is(err, errMalformedPatch) ||
						errors.Is(err, errMalformedMessages), "fatal error class: %v", err)
					fatalAt = i
					break
				}
			}
			want := -1
			if v.Expect.FatalAt != nil {
				want = *v.Expect.FatalAt
			}
			assert.Equal(t, want, fatalAt, "fatal position (-1: none); %s", v.About)
			assert.Equal(t, v.Expect.Skipped, skipped, "skipped events")
			assertJSONEqual(t, mustParse(t, string(v.Expect.State)), c.State().node(), "state")
			assertJSONEqual(t, mustParse(t, string(v.Expect.Messages)), encodeMessages(c.Messages()), "messages")
		})
	}
}

// TestConformance runs every case of the public RFC 6902 conformance suite
// (json-patch-tests: tests.json and spec_tests.json) that the suite does not
// itself disable: an "error" case must fail, an "expected" case must give
// that document.
func TestConformance(t *testing.T) {
	dir := sharedDir(t, "conformance/json-patch-tests")
	total, ran := 0, 0
	for _, file := range []string{"tests.json", "spec_tests.json"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		var cases []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(data, &cases))
		for i, c := range cases {
			total++
			if string(c["disabled"]) == "true" || (c["expected"] == nil && c["error"] == nil) {
				continue
			}
			ran++
			name := file + "/" + string(c["comment"])
			t.Run(name, func(t *testing.T) {
				doc := mustParse(t, string(c["doc"]))
				patch := mustParse(t, string(c["patch"]))
				ops, err := decodePatch(patch, limits{})
				if err == nil {
					var got = doc
					got, err = applyPatch(doc, ops, limits{})
					if err == nil && c["expected"] != nil {
						assertJSONEqual(t, mustParse(t, string(c["expected"])), got, "case", i)
						return
					}
				}
				if c["error"] != nil {
					require.Error(t, err, "case %d must fail: %s", i, c["error"])
					assertJSONEqual(t, mustParse(t, string(c["doc"])), doc, "the document must not change")
					return
				}
				require.NoError(t, err, "case %d", i)
			})
		}
	}
	t.Logf("conformance: ran %d of %d records", ran, total)
}

// TestIdentityCases runs every input of ../shared/cases/identity (issue 8)
// and requires the result its README expects.
func TestIdentityCases(t *testing.T) {
	dir := sharedDir(t, "cases/identity")
	const (
		answer = `{"id":"shared-1","role":"assistant","content":"Here is the plan"}`
		user   = `{"id":"u-1","role":"user","content":"book a table"}`
		photo  = `{"id":"u-2","role":"user","content":[{"type":"text","text":"what is in this photo?"},{"type":"binary","mimeType":"image/png","url":"https://example.invalid/cat.png"}]}`
		notes  = `{"id":"a1","role":"assistant","content":"","toolCalls":[{"id":"call_1","type":"function","function":{"name":"file_read","arguments":"{\"path\":\"notes.txt\"}"}}]}`
	)
	cases := []struct {
		stream, input string
		want          string  // the messages
		warnings      []error // each warning's sentinel
		fatalAt       int     // the position of a fatal event, or 0
	}{
		{stream: "B44-activity-over-text.json", want: `[` + answer + `]`, warnings: []error{ErrNoTarget, ErrNoTarget}},
		{stream: "B44-activity-over-user.json", input: "B44-user-input.input.json", want: `[` + user + `]`, warnings: []error{ErrNoTarget, ErrNoTarget}},
		{stream: "B47-reasoning-text-same-id.json", want: `[{"id":"msg-a","role":"reasoning","content":"weighing options"}]`,
			warnings: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget}},
		{stream: "B47-v2-reasoning-into-assistant.json", want: `[{"id":"msg-b","role":"assistant","content":"Answer: 42."}]`,
			warnings: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget}},
		{stream: "B47-v5-text-into-multipart-user.json", input: "B47-v5.input.json", want: `[` + photo + `]`,
			warnings: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget}},
		{stream: "toolcall-replay.sse", input: "toolcall-replay.input.json", want: `[{"id":"u1","role":"user","content":"read notes.txt"},` + notes + `]`,
			warnings: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget}},
		{stream: "f12-warned-closes-chunk.jsonl", want: `[{"id":"m1","role":"assistant","content":"a"}]`,
			warnings: []error{ErrNoTarget}, fatalAt: 3},
		{stream: "B53-integral-floats.json", want: `[]`},
	}
	for _, tc := range cases {
		t.Run(tc.stream, func(t *testing.T) {
			c := New(nil)
			warnings := warningsOf(c)
			if tc.input != "" {
				input, err := os.ReadFile(filepath.Join(dir, tc.input))
				require.NoError(t, err)
				require.NoError(t, startRun(c, string(input)))
			}
			f, err := os.Open(filepath.Join(dir, tc.stream))
			require.NoError(t, err)
			defer f.Close()
			err = c.Run(context.Background(), f)
			if tc.fatalAt > 0 {
				var ee *EventError
				require.ErrorAs(t, err, &ee)
				assert.Equal(t, tc.fatalAt, ee.Position)
				assert.ErrorIs(t, err, ErrMalformedEvent)
			} else {
				require.NoError(t, err)
			}
			require.Len(t, warnings(), len(tc.warnings), "%v", warnings())
			for i, w := range tc.warnings {
				assert.ErrorIs(t, warnings()[i], w)
			}
			assert.Equal(t, tc.want, messagesJSON(c))
			if tc.input != "" {
				assert.Equal(t, strings.Count(tc.want, `"role"`), len(c.NextInput(nil).Messages),
					"every message, the user's included, goes to the next run")
			}
		})
	}

	t.Run("B53 decodes", func(t *testing.T) {
		c := New(nil)
		f, err := os.Open(filepath.Join(dir, "B53-integral-floats.json"))
		require.NoError(t, err)
		defer f.Close()
		require.NoError(t, c.Run(context.Background(), f))
		var checked bool
		require.NoError(t, c.State().Decode("/checked", &checked))
		assert.True(t, checked)
		for member, want := range map[string]int64{"daily_average": 25419, "total": 1500, "hundred": 100, "zero": 0, "plain": 25419} {
			var got int64
			require.NoError(t, c.State().Decode("/stats/"+member, &got), member)
			assert.Equal(t, want, got, member)
		}
	})

	t.Run("B52 reads back", func(t *testing.T) {
		c := New(nil)
		f, err := os.Open(filepath.Join(dir, "B52-depth-1000.jsonl"))
		require.NoError(t, err)
		defer f.Close()
		require.NoError(t, c.Run(context.Background(), f))
		require.Equal(t, 1000, c.State().node().Depth(), "the state is exactly MaxDepth deep")
		next, err := json.Marshal(c.NextInput(nil))
		require.NoError(t, err)
		var in RunAgentInput
		require.NoError(t, json.Unmarshal(next, &in), "the next input reads back")
		again := New(nil)
		require.NoError(t, startRun(again, string(next)), "and loads")
		empty, err := os.Open(filepath.Join(dir, "B52-empty.json"))
		require.NoError(t, err)
		defer empty.Close()
		require.NoError(t, again.Run(context.Background(), empty))
		assert.True(t, again.State().Equal(c.State()))
		snap, err := json.Marshal(map[string]any{"type": "STATE_SNAPSHOT", "snapshot": c.State()})
		require.NoError(t, err)
		assert.NoError(t, c.Apply(snap), "the held state re-sent as a snapshot")
	})
}
