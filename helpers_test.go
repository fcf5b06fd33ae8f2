// Helpers shared by the tests: the shared data folder, JSON comparison, table
// rows of events.

package aguistate

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedDir returns the path of ../shared/NAME, the project's read-only
// shared test data. It skips the test when the folder is absent, and fails
// it instead when the CI environment variable is set.
func sharedDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join("..", "shared", name)
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI: %v", dir, err)
		}
		t.Skipf("%s not found (clone the repository next to shared/ to run this test): %v", dir, err)
	}
	return dir
}

// mustParse parses JSON text for a test.
func mustParse(t testing.TB, text string) *jsonv.Node {
	t.Helper()
	n, err := jsonv.Parse([]byte(text), 0)
	require.NoError(t, err, "parse %s", text)
	return n
}

// assertJSONEqual fails unless want and got are the same JSON value
// (RFC 6902 equality: exact numbers, any member order).
func assertJSONEqual(t testing.TB, want, got *jsonv.Node, msg ...any) {
	t.Helper()
	if !jsonv.Equal(want, got) {
		t.Errorf("JSON values differ %v\nwant: %s\n got: %s", msg, jsonv.Marshal(want), jsonv.Marshal(got))
	}
}

// eventCase is one table row for the event handlers: a Consumer starts from
// state and messages (a run input's), applies events in order, and must end
// with the expected messages and state, byte for byte (member order counts).
type eventCase struct {
	name, reason string
	state        string   // starting state; "" means {}
	messages     string   // starting messages; "" means []
	events       []string // the stream
	want         string   // messages after the stream (exact JSON text)
	wantState    string   // state after the stream; "" means unchanged
	warn         []error  // the sentinel of each warning, in order
	warnText     []string // when set, a part of the text of each warning, in order
	fatal        error    // the sentinel of the last event's fatal error, or nil
	fatalText    string   // when set, a part of the fatal error's text
}

// newCase returns a Consumer started from c's state and messages.
func newCase(t *testing.T, c eventCase) *Consumer {
	t.Helper()
	state, messages := c.state, c.messages
	if state == "" {
		state = "{}"
	}
	if messages == "" {
		messages = "[]"
	}
	con := New(nil)
	require.NoError(t, startRun(con, `{"state":`+state+`,"messages":`+messages+`}`))
	return con
}

// runEventCases runs the rows in parallel. For a fatal row the last event
// must fail with an *EventError wrapping c.fatal and leave the state, the
// messages and the pending interrupts as they were.
func runEventCases(t *testing.T, cases []eventCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			con := newCase(t, c)
			startState := con.State().String()
			var warns []error
			con.Subscribe(func(ch Change) {
				if ch.Warning != nil {
					warns = append(warns, ch.Warning)
				}
			})
			for i, ev := range c.events {
				last := i == len(c.events)-1
				if last && c.fatal != nil {
					before := snapshot(con)
					err := con.Apply([]byte(ev))
					var ee *EventError
					require.ErrorAs(t, err, &ee, "the last event must be fatal; %s", c.reason)
					assert.ErrorIs(t, err, c.fatal)
					assert.Contains(t, err.Error(), c.fatalText, c.reason)
					assertArticles(t, err)
					assert.Equal(t, i+1, ee.Position)
					assert.Equal(t, before, snapshot(con), "a fatal event changes nothing")
					break
				}
				require.NoError(t, con.Apply([]byte(ev)), "event %d; %s", i+1, c.reason)
			}
			assert.Equal(t, c.want, messagesJSON(con), c.reason)
			wantState := c.wantState
			if wantState == "" {
				wantState = startState
			}
			assert.Equal(t, wantState, con.State().String(), "state; %s", c.reason)
			require.Len(t, warns, len(c.warn), "warnings %v; %s", warns, c.reason)
			for i, w := range c.warn {
				var ee *EventError
				assert.ErrorAs(t, warns[i], &ee)
				assert.ErrorIs(t, warns[i], w)
				if i < len(c.warnText) {
					assert.Contains(t, warns[i].Error(), c.warnText[i], c.reason)
				}
				assertArticles(t, warns[i])
			}
		})
	}
}

// badArticle matches "a" before a word, or a quoted word, that begins with a
// vowel: "a array", "a \"assistant\" message".
var badArticle = regexp.MustCompile(`\ba "?[aeiouAEIOU]`)

// assertArticles fails when the text of err has a wrong article.
func assertArticles(t testing.TB, err error) {
	t.Helper()
	assert.NotRegexp(t, badArticle, err.Error(), "an article before a vowel is \"an\"")
}

// warningsOf subscribes to c and returns a function that gives the
// warnings c has reported since.
func warningsOf(c *Consumer) func() []error {
	var warnings []error
	c.Subscribe(func(ch Change) {
		if ch.Warning != nil {
			warnings = append(warnings, ch.Warning)
		}
	})
	return func() []error { return warnings }
}

// messagesJSON returns the Consumer's messages as one JSON array.
func messagesJSON(c *Consumer) string { return string(jsonv.Marshal(encodeMessages(c.Messages()))) }

// snapshot returns everything a fatal event must leave unchanged: the
// Consumer's checkpoint but for the count of events, which counts a
// rejected event too.
func snapshot(c *Consumer) string {
	v := *c.cur.Load()
	v.events = 0
	return string(v.checkpoint())
}

// startRun starts a run on c with the RunAgentInput JSON text input, read
// as RunAgentInput.UnmarshalJSON reads it.
func startRun(c *Consumer, input string) error {
	var in RunAgentInput
	if err := in.UnmarshalJSON([]byte(input)); err != nil {
		return err
	}
	return c.StartRun(in)
}

// owned returns a copy of v with a runView of its own, which a test may
// change without changing v.
func (v *view) owned() view {
	w, r := *v, *v.runView
	w.runView = &r
	return w
}
