// Tests of client-side tools: RunTools against httptest agents that ask
// for tools.

package aguistate

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolAgent returns an agent that asks for the tool calls that calls
// returns for a run's input (name and arguments each), and answers
// "done: " and the tool results it got when it returns none; and the
// inputs it got.
func toolAgent(t *testing.T, calls func(run int, body map[string]json.RawMessage) [][2]string) (*Agent, func() []map[string]json.RawMessage) {
	t.Helper()
	var mu sync.Mutex
	var inputs []map[string]json.RawMessage
	agent, _ := scriptedAgent(t, func(body map[string]json.RawMessage, _ *http.Request) []string {
		mu.Lock()
		inputs = append(inputs, body)
		run := len(inputs)
		mu.Unlock()
		var runID string
		_ = json.Unmarshal(body["runId"], &runID)
		ids := `"threadId":` + string(body["threadId"]) + `,"runId":` + string(body["runId"])
		events := []string{`{"type":"RUN_STARTED",` + ids + `}`}
		asked := calls(run, body)
		for i, call := range asked {
			id, _ := json.Marshal(runID + "-call" + string(rune('0'+i)))
			name, _ := json.Marshal(call[0])
			args, _ := json.Marshal(call[1])
			events = append(events,
				`{"type":"TOOL_CALL_START","toolCallId":`+string(id)+`,"toolCallName":`+string(name)+`,"parentMessageId":"a-`+runID+`"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":`+string(id)+`,"delta":`+string(args)+`}`,
				`{"type":"TOOL_CALL_END","toolCallId":`+string(id)+`}`)
		}
		if len(asked) == 0 {
			var msgs []struct{ Role, Content string }
			_ = json.Unmarshal(body["messages"], &msgs)
			var results []string
			for _, m := range msgs {
				if m.Role == "tool" {
					results = append(results, m.Content)
				}
			}
			text, _ := json.Marshal("done: " + strings.Join(results, ", "))
			events = append(events, `{"type":"TEXT_MESSAGE_CHUNK","messageId":"a-`+runID+`","delta":`+string(text)+`}`)
		}
		return append(events, `{"type":"RUN_FINISHED",`+ids+`}`)
	})
	return agent, func() []map[string]json.RawMessage {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]json.RawMessage(nil), inputs...)
	}
}

func weather(_ context.Context, call ToolCall) (string, error) {
	var args struct{ City string }
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
		return "", err
	}
	return `{"city":"` + args.City + `","sky":"clear"}`, nil
}

func TestRunTools(t *testing.T) {
	t.Parallel()
	agent, inputs := toolAgent(t, func(run int, _ map[string]json.RawMessage) [][2]string {
		if run == 1 {
			return [][2]string{{"get_weather", `{"city":"Rome"}`}, {"get_weather", `{"city":"Oslo"}`}}
		}
		return nil
	})
	c := New(nil)
	require.NoError(t, c.AddMessages(UserMessage("Weather in Rome and Oslo?")))
	tools := []Tool{{Name: "get_weather", Description: "The weather in a city.", Parameters: json.RawMessage(`{"type": "object"}`), Func: weather}}
	res, err := c.RunTools(context.Background(), agent, tools, &RunOptions{RunID: "first", Tools: json.RawMessage(`[{"name":"other","description":""}]`)})
	require.NoError(t, err)
	assert.Equal(t, "success", res.Outcome)
	assert.Empty(t, res.PendingToolCalls)
	var texts []string
	for _, m := range res.NewMessages {
		texts = append(texts, m.Role()+": "+m.Text())
	}
	assert.Equal(t, []string{"assistant: ", `tool: {"city":"Rome","sky":"clear"}`, `tool: {"city":"Oslo","sky":"clear"}`,
		`assistant: done: {"city":"Rome","sky":"clear"}, {"city":"Oslo","sky":"clear"}`}, texts,
		"every message added since RunTools began: the calls, their results, the answer")

	in := inputs()
	require.Len(t, in, 2, "a run, the results, a run")
	for _, body := range in {
		assert.JSONEq(t, `[{"name":"other","description":""},{"name":"get_weather","description":"The weather in a city.","parameters":{"type":"object"}}]`,
			string(body["tools"]), "the definitions go in every run's input, after RunOptions.Tools")
	}
	assert.Equal(t, `"first"`, string(in[0]["runId"]))
	assert.NotEqual(t, `"first"`, string(in[1]["runId"]), "RunOptions.RunID is the first run's")
	assert.Contains(t, string(in[1]["messages"]), `"role":"tool","content":"{\"city\":\"Rome\",\"sky\":\"clear\"}","toolCallId":"first-call0"`)
}

// TestRunToolsStops checks each way RunTools stops.
func TestRunToolsStops(t *testing.T) {
	t.Parallel()
	always := func(int, map[string]json.RawMessage) [][2]string {
		return [][2]string{{"get_weather", `{"city":"Rome"}`}}
	}
	t.Run("a tool without Func", func(t *testing.T) {
		t.Parallel()
		agent, inputs := toolAgent(t, func(run int, _ map[string]json.RawMessage) [][2]string {
			if run == 1 {
				return [][2]string{{"confirm", `{}`}, {"get_weather", `{"city":"Rome"}`}}
			}
			return nil
		})
		c := New(nil)
		tools := []Tool{{Name: "confirm", Description: "Ask the user."}, {Name: "get_weather", Func: weather}}
		res, err := c.RunTools(context.Background(), agent, tools, nil)
		require.NoError(t, err)
		require.Len(t, res.PendingToolCalls, 1, "the application answers it")
		assert.Equal(t, "confirm", res.PendingToolCalls[0].Name)
		assert.Len(t, inputs(), 1, "no run while a call is pending that no Func answers")
		assert.Contains(t, res.NewMessages[len(res.NewMessages)-1].Text(), "Rome", "the calls a Func answers are answered")

		again, err := c.RunTools(context.Background(), agent, tools, nil)
		require.NoError(t, err)
		assert.Equal(t, "", again.Outcome, "still pending: no run")
		assert.Len(t, inputs(), 1)

		require.NoError(t, c.AddMessages(ToolMessage(res.PendingToolCalls[0].ID, "yes")))
		res, err = c.RunTools(context.Background(), agent, tools, nil)
		require.NoError(t, err)
		assert.Equal(t, "success", res.Outcome)
		assert.Len(t, inputs(), 2)
		assert.Equal(t, `done: {"city":"Rome","sky":"clear"}, yes`, res.NewMessages[len(res.NewMessages)-1].Text(), "the results in the order they were added")
	})
	t.Run("a Func that fails", func(t *testing.T) {
		t.Parallel()
		agent, inputs := toolAgent(t, func(run int, _ map[string]json.RawMessage) [][2]string {
			return [][2]string{{"get_weather", `{"city":"Rome"}`}, {"get_weather", `not JSON`}, {"get_weather", `{"city":"Oslo"}`}}
		})
		c := New(nil)
		res, err := c.RunTools(context.Background(), agent, []Tool{{Name: "get_weather", Func: weather}}, nil)
		var syntax *json.SyntaxError
		require.ErrorAs(t, err, &syntax, "the Func's error, wrapped")
		assert.ErrorContains(t, err, `tool "get_weather" (call "`)
		assert.Len(t, inputs(), 1)
		require.Len(t, res.PendingToolCalls, 2, "the failed call and the one after it stay pending")
		assert.Equal(t, `not JSON`, res.PendingToolCalls[0].Arguments)
		assert.Equal(t, "tool", c.Messages()[len(c.Messages())-1].Role(), "the result before it is added")
	})
	t.Run("MaxRuns", func(t *testing.T) {
		t.Parallel()
		agent, inputs := toolAgent(t, always)
		c := New(nil)
		res, err := c.RunTools(context.Background(), agent, []Tool{{Name: "get_weather", Func: weather}}, &RunOptions{MaxRuns: 2})
		assert.ErrorIs(t, err, ErrLimit)
		assert.ErrorContains(t, err, "MaxRuns")
		assert.Len(t, inputs(), 2)
		assert.Empty(t, res.PendingToolCalls, "the last run's calls are answered: the thread is ready for the next run")
	})
	t.Run("an interrupt", func(t *testing.T) {
		t.Parallel()
		agent, _ := scriptedAgent(t, func(map[string]json.RawMessage, *http.Request) []string {
			return []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"approve"}]}}`}
		})
		c := New(nil)
		res, err := c.RunTools(context.Background(), agent, []Tool{{Name: "get_weather", Func: weather}}, nil)
		require.NoError(t, err)
		assert.Equal(t, "interrupt", res.Outcome)
		assert.Len(t, res.Interrupts, 1, "the application answers the interrupt")
	})
	t.Run("a failed run", func(t *testing.T) {
		t.Parallel()
		agent, _ := scriptedAgent(t, func(map[string]json.RawMessage, *http.Request) []string {
			return []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, `{"type":"RUN_ERROR","message":"boom"}`}
		})
		_, err := New(nil).RunTools(context.Background(), agent, nil, nil)
		var re *RunError
		assert.ErrorAs(t, err, &re)
	})
	t.Run("a context that ends", func(t *testing.T) {
		t.Parallel()
		agent, inputs := toolAgent(t, always)
		ctx, cancel := context.WithCancel(context.Background())
		_, err := New(nil).RunTools(ctx, agent, []Tool{{Name: "get_weather", Func: func(ctx context.Context, call ToolCall) (string, error) {
			cancel()
			return "", ctx.Err()
		}}}, nil)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Len(t, inputs(), 1)
	})
}

// TestRunToolsDefinedInOptions checks that a tool that RunOptions.Tools
// defines keeps that definition, and is answered by its Func.
func TestRunToolsDefinedInOptions(t *testing.T) {
	t.Parallel()
	agent, inputs := toolAgent(t, func(run int, _ map[string]json.RawMessage) [][2]string {
		if run == 1 {
			return [][2]string{{"get_weather", `{"city":"Rome"}`}}
		}
		return nil
	})
	defined := `[{"name":"get_weather","description":"Weather.","parameters":{"type":"object"}}]`
	res, err := New(nil).RunTools(context.Background(), agent, []Tool{{Name: "get_weather", Func: weather}}, &RunOptions{Tools: json.RawMessage(defined)})
	require.NoError(t, err)
	assert.Equal(t, `done: {"city":"Rome","sky":"clear"}`, res.NewMessages[len(res.NewMessages)-1].Text())
	for _, in := range inputs() {
		assert.JSONEq(t, defined, string(in["tools"]), "one definition, as given")
	}
}

// TestRunToolsRefuses checks the tools that RunTools refuses before it
// sends anything.
func TestRunToolsRefuses(t *testing.T) {
	t.Parallel()
	agent, inputs := toolAgent(t, func(int, map[string]json.RawMessage) [][2]string { return nil })
	for _, tc := range []struct {
		name  string
		tools []Tool
		opts  *RunOptions
		want  string
	}{
		{"no name", []Tool{{Description: "x"}}, nil, "tool 0 has no name"},
		{"a name twice", []Tool{{Name: "f"}, {Name: "f"}}, nil, `two tools are named "f"`},
		{"bad parameters", []Tool{{Name: "f", Parameters: json.RawMessage(`{`)}}, nil, `tool "f": Parameters is not valid JSON`},
		{"bad RunOptions.Tools", []Tool{{Name: "f"}}, &RunOptions{Tools: json.RawMessage(`{}`)}, "RunOptions.Tools"},
	} {
		_, err := New(nil).RunTools(context.Background(), agent, tc.tools, tc.opts)
		assert.ErrorContains(t, err, tc.want, tc.name)
		assert.True(t, strings.HasPrefix(err.Error(), "aguistate: RunTools: "), tc.name)
	}
	assert.Empty(t, inputs(), "nothing is sent")
}
