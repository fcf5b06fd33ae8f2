// Client-side tools: the tools an application answers in Go, and RunTools,
// which runs the agent until no call is left for them.

package aguistate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Tool is a tool that the application offers the agent and runs itself
// (an AG-UI frontend tool): its definition (AG-UI Tool), which goes in
// each run's input, and the Go function that answers its calls.
type Tool struct {
	// Name is the tool's name, as the model calls it. Required.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Parameters is the JSON Schema of the tool's arguments, as JSON text.
	// Default (nil): none, which AG-UI reads as a tool without arguments.
	Parameters json.RawMessage
	// Func answers one call of the tool. It gets the call, whose
	// Arguments are JSON text as the model wrote it (not checked), and
	// returns the result the agent reads: JSON text, or plain text. An
	// error stops [Consumer.RunTools]. Default (nil): the application
	// answers the tool's calls itself, and RunTools leaves them pending.
	Func func(ctx context.Context, call ToolCall) (string, error)
}

// defaultMaxRuns is the most runs RunTools makes when RunOptions says none.
const defaultMaxRuns = 10

// RunTools runs the agent as [Consumer.RunAgent] does, answers the tool
// calls each run leaves for the client ([Consumer.PendingToolCalls]) with
// the Func of the tool of their name, adds the results to the thread as
// [ToolMessage]s, and runs again, until a run leaves no call pending. The
// definitions of tools go in every run's input, after those of opts.Tools;
// a tool that opts.Tools defines keeps the definition given there.
//
// It starts by answering the calls an earlier run left, and stops:
//   - when a run leaves no call pending, or ends with an interrupt or
//     cancelled (its Outcome says which): it returns nil;
//   - when a call is pending whose tool has no Func, or that names no tool
//     of tools: it answers the others, and returns nil, with the call in
//     PendingToolCalls; it makes no run while such a call is pending.
//     Answer it with [Consumer.AddMessages] and [ToolMessage], and call
//     RunTools again;
//   - when a Func fails: it returns its error, wrapped with the tool's name
//     and the call's id; the results of the calls answered before it are
//     added, and the failed call stays pending;
//   - when opts.MaxRuns runs (default 10) have left calls pending: it
//     answers them, and returns an error wrapping [ErrLimit];
//   - when a run fails: it returns RunAgent's error.
//
// It calls each Func in turn, in the order of the calls, with ctx. The
// RunResult is the last run's (with Outcome "" when it made none), but its
// NewMessages are all the messages added since RunTools began, the tool
// results included, and its PendingToolCalls are those still pending.
// opts.RunID and opts.Resume go with the first run only. It returns an
// error before anything is sent when a tool has no name, two have one
// name, or Parameters or opts.Tools is not valid JSON.
func (c *Consumer) RunTools(ctx context.Context, a *Agent, tools []Tool, opts *RunOptions) (RunResult, error) {
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	byName, defs, err := toolDefinitions(o.Tools, tools)
	if err != nil {
		return RunResult{}, apiError(fmt.Errorf("RunTools: %w", err))
	}
	o.Tools = defs
	maxRuns := o.MaxRuns
	if maxRuns <= 0 {
		maxRuns = defaultMaxRuns
	}
	before := c.cur.Load().messages
	var res RunResult
	done := func(err error) (RunResult, error) {
		res.NewMessages, res.PendingToolCalls = c.newMessages(before), c.PendingToolCalls()
		return res, err
	}
	for runs := 0; ; runs++ {
		pending := c.PendingToolCalls()
		if runs > 0 && len(pending) == 0 {
			return done(nil)
		}
		if answered, err := c.answer(ctx, byName, pending); err != nil || !answered {
			return done(err)
		}
		if runs == maxRuns {
			return done(apiError(fmt.Errorf("%w: %d runs, and the last one left tool calls for the client (RunOptions.MaxRuns)", ErrLimit, runs)))
		}
		var err error
		if res, err = c.RunAgent(ctx, a, &o); err != nil {
			return done(err)
		}
		o.RunID, o.Resume = "", nil
		if res.Outcome != "success" {
			return done(nil)
		}
	}
}

// answer calls the Func of each call's tool, in order, and adds the
// results. It reports whether it answered every call: it passes over a
// call whose tool has no Func, and stops at the first whose Func fails,
// with its error, adding the results before it.
func (c *Consumer) answer(ctx context.Context, byName map[string]Tool, calls []ToolCall) (bool, error) {
	var results []Message
	var err error
	all := true
	for _, call := range calls {
		tool, ok := byName[call.Name]
		if !ok || tool.Func == nil {
			all = false
			continue
		}
		if err = ctx.Err(); err != nil {
			break
		}
		var out string
		if out, err = tool.Func(ctx, call); err != nil {
			err = apiError(fmt.Errorf("tool %s (call %s): %w", jsonv.Quote(call.Name), jsonv.Quote(call.ID), err))
			break
		}
		results = append(results, ToolMessage(call.ID, out))
	}
	if len(results) > 0 {
		if addErr := c.AddMessages(results...); err == nil {
			err = addErr
		}
	}
	return all && err == nil, err
}

// toolDefinitions returns tools by name, and the JSON array of the tool
// definitions of a run: those of defined (JSON text, nil for none), then
// those of tools that defined does not name.
func toolDefinitions(defined json.RawMessage, tools []Tool) (map[string]Tool, json.RawMessage, error) {
	var list []json.RawMessage
	if defined != nil {
		if err := json.Unmarshal(defined, &list); err != nil {
			return nil, nil, fmt.Errorf("RunOptions.Tools: %w", err)
		}
	}
	names := make(map[string]bool)
	for _, d := range list {
		var def struct{ Name string }
		if json.Unmarshal(d, &def) == nil {
			names[def.Name] = true
		}
	}
	byName := make(map[string]Tool, len(tools))
	for i, tool := range tools {
		switch _, twice := byName[tool.Name]; {
		case tool.Name == "":
			return nil, nil, fmt.Errorf("tool %d has no name", i)
		case twice:
			return nil, nil, fmt.Errorf("two tools are named %s", jsonv.Quote(tool.Name))
		case tool.Parameters != nil && !json.Valid(tool.Parameters):
			return nil, nil, fmt.Errorf("tool %s: Parameters is not valid JSON", jsonv.Quote(tool.Name))
		}
		byName[tool.Name] = tool
		if names[tool.Name] {
			continue // defined in RunOptions.Tools
		}
		var b bytes.Buffer
		b.WriteString(`{"name":`)
		b.Write(jsonv.AppendString(nil, tool.Name))
		b.WriteString(`,"description":`)
		b.Write(jsonv.AppendString(nil, tool.Description))
		if tool.Parameters != nil {
			b.WriteString(`,"parameters":`)
			_ = json.Compact(&b, tool.Parameters) // valid, as checked above
		}
		b.WriteByte('}')
		list = append(list, b.Bytes())
	}
	if len(tools) == 0 {
		return byName, defined, nil // nothing to merge: sent as given
	}
	out, err := json.Marshal(list)
	return byName, out, err
}
