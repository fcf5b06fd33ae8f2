// Command chat is a terminal chat with any AG-UI agent.
//
// Usage:
//
//	go run ./examples/chat -url URL [-H 'Name: value']... [-input RUN_INPUT.json] [-tool NAME=COMMAND]...
//
// Each non-empty line of standard input is the user's next message: it is
// added to the thread as a user message and the agent at URL is run
// (AG-UI HTTP transport). The thread (state and messages) goes on from run
// to run. -H sets one request header on every run, such as
// -H 'Authorization: Bearer TOKEN'; it may repeat. -input names a
// RunAgentInput JSON file: its thread id, state and messages are the
// starting value, and its tools, context and forwardedProps go with every
// run.
//
// -tool NAME=COMMAND makes NAME a client-side tool; it may repeat. A call
// of NAME that a run leaves for the client is answered by running COMMAND
// with sh -c, the call's arguments (JSON) on its standard input: its
// standard output, less one final newline, is the result, and the next run
// starts at once. The tool's definition is -input's, when -input defines a
// tool NAME, or else its name alone. A call of a tool with no -tool is
// answered by the next input line, one line for each such call; the run
// starts once all are answered.
//
// Standard output gets the assistant's text as it streams, piece by piece,
// a line "tool call: NAME ARGUMENTS" when a tool call ends, a line
// "tool result: NAME RESULT" when a -tool answers one, and a line
// "state: ..." that sums up each change of the state. When no assistant
// text streamed, the assistant messages that a turn's runs added whole, in
// snapshots, are printed at its end.
//
// Standard error gets "interrupt: {...}" (the interrupt's JSON) for each
// interrupt a run leaves pending. The next input line answers all of them
// and the resumed run starts at once: "/cancel" cancels them; any other
// line resolves each, with the line as the payload if it is JSON, or else
// the line as a JSON string. A RUN_ERROR gives "error: run failed:
// MESSAGE" (and " (code CODE)"), any other failure "error: ...", a -tool
// command that fails "error: ..." and its own standard error, and a
// skipped event "warning: ..."; the chat goes on with the next line.
//
// When standard input is a terminal, standard error also gets a prompt
// ("NAME> " while a call of NAME waits for its result) and a waiting
// indicator while a run has sent nothing yet; otherwise nothing but the
// above is printed.
//
// At the end of input the exit status is 0 if every run succeeded or was
// interrupted and answered, 1 if any run or -tool command failed
// (RUN_ERROR, a fatal event, a transport or HTTP error) or interrupts or
// tool calls were left unanswered, and 2 for bad usage or an unreadable
// input file.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/examples/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, isTerminal(os.Stdin)))
}

// isTerminal reports whether f is a character device, such as a terminal.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, tty bool) int {
	flags := flag.NewFlagSet("chat", flag.ContinueOnError)
	flags.SetOutput(stderr)
	url := flags.String("url", "", "the agent's run `URL` (required)")
	header := cli.Header{}
	flags.Var(header, "H", "a request `header` 'Name: value' for every run; may repeat")
	inputPath := flags.String("input", "", "RunAgentInput JSON `file` with the starting thread, tools, context and forwardedProps")
	commands := toolCommands{}
	flags.Var(&commands, "tool", "a client-side tool `NAME=COMMAND`: COMMAND (sh -c) gets a call's arguments on standard input and writes its result; may repeat")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: chat -url URL [-H 'Name: value']... [-input RUN_INPUT.json] [-tool NAME=COMMAND]...")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err == flag.ErrHelp {
		return 0
	} else if err != nil {
		return 2
	}
	if *url == "" || flags.NArg() > 0 {
		flags.Usage()
		return 2
	}

	ch := &chat{
		c:      aguistate.New(nil),
		agent:  &aguistate.Agent{URL: *url, Header: http.Header(header)},
		stdout: stdout, stderr: stderr, tty: tty,
		shown: make(map[string]bool),
	}
	if *inputPath != "" {
		in, err := cli.LoadInput(ch.c, *inputPath)
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 2
		}
		ch.opts = aguistate.RunOptions{Tools: in.Tools, Context: in.Context, ForwardedProps: in.ForwardedProps}
	}
	for _, tc := range commands {
		ch.tools = append(ch.tools, aguistate.Tool{Name: tc.name, Func: ch.command(tc)})
	}
	ch.c.Subscribe(ch.onChange)
	return ch.loop(stdin)
}

// toolCommand is one -tool: a tool's name and the command that answers its
// calls.
type toolCommand struct{ name, command string }

// toolCommands is a flag.Value for the repeatable -tool NAME=COMMAND flag.
type toolCommands []toolCommand

func (t *toolCommands) String() string {
	var names []string
	for _, tc := range *t {
		names = append(names, tc.name+"="+tc.command)
	}
	return strings.Join(names, " ")
}

// Set adds the tool NAME=COMMAND in s. It fails when s has no "=", or an
// empty name or command, or names a tool given already.
func (t *toolCommands) Set(s string) error {
	name, command, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	switch {
	case !ok || name == "" || strings.TrimSpace(command) == "":
		return fmt.Errorf("tool %q is not NAME=COMMAND", s)
	case t.has(name):
		return fmt.Errorf("tool %q is given twice", name)
	}
	*t = append(*t, toolCommand{name, command})
	return nil
}

func (t *toolCommands) has(name string) bool {
	for _, tc := range *t {
		if tc.name == name {
			return true
		}
	}
	return false
}

// chat is one session: a thread, the agent, and what was printed of it.
type chat struct {
	c              *aguistate.Consumer
	agent          *aguistate.Agent
	opts           aguistate.RunOptions // -input's tools, context and forwardedProps
	tools          []aguistate.Tool     // the -tool commands
	stdout, stderr io.Writer
	tty            bool

	streamed bool            // assistant text streamed in the turn being run
	shown    map[string]bool // tool call ids printed
	midLine  bool            // standard output does not end in a newline
	waiting  bool            // the waiting indicator is on standard error
	failed   bool            // a run failed
}

// loop reads the user's lines and runs the agent for each.
func (ch *chat) loop(stdin io.Reader) int {
	lines := bufio.NewScanner(stdin)
	lines.Buffer(make([]byte, 64<<10), 16<<20)
	ch.prompt()
	for lines.Scan() {
		line := strings.TrimRight(lines.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			ch.prompt()
			continue
		}
		opts := ch.opts
		var err error
		switch calls := ch.c.PendingToolCalls(); {
		case len(ch.c.Interrupts()) > 0:
			opts.Resume, err = ch.c.Resume(answer(line))
		case len(calls) > 0: // a call that no -tool answers: the line is its result
			err = ch.c.AddMessages(aguistate.ToolMessage(calls[0].ID, line))
			if err == nil && len(calls) > 1 {
				ch.prompt()
				continue
			}
		default:
			err = ch.c.AddMessages(aguistate.UserMessage(line))
		}
		if err != nil {
			ch.fail(err)
			ch.prompt()
			continue
		}
		ch.runTurn(&opts)
		ch.prompt()
	}
	if err := lines.Err(); err != nil {
		ch.fail(fmt.Errorf("reading standard input: %w", err))
	}
	if n := len(ch.c.Interrupts()); n > 0 {
		ch.fail(fmt.Errorf("the input ended with %d interrupts unanswered", n))
	}
	if n := len(ch.c.PendingToolCalls()); n > 0 {
		ch.fail(fmt.Errorf("the input ended with %d tool calls unanswered", n))
	}
	if ch.failed {
		return 1
	}
	return 0
}

// answer returns the resume answer for the line that answers the pending
// interrupts: "/cancel" cancels each; any other line resolves each, with
// the line as the payload if it is JSON, or else as a JSON string.
func answer(line string) func(aguistate.Value) (any, bool) {
	if strings.TrimSpace(line) == "/cancel" {
		return func(aguistate.Value) (any, bool) { return nil, false }
	}
	var payload any = line
	if json.Valid([]byte(line)) {
		payload = json.RawMessage(line)
	}
	return func(aguistate.Value) (any, bool) { return payload, true }
}

// runTurn runs the agent until the turn is done, answering the calls of
// the -tool tools, and reports how it ended.
func (ch *chat) runTurn(opts *aguistate.RunOptions) {
	if ch.tty {
		fmt.Fprint(ch.stderr, "(waiting…)")
		ch.waiting = true
	}
	ch.streamed = false
	res, err := ch.c.RunTools(context.Background(), ch.agent, ch.tools, opts)
	ch.clearWaiting()
	for _, m := range res.NewMessages { // a producer that streamed no text sent it whole, in a snapshot
		if text := m.Text(); m.Role() == "assistant" && text != "" && !ch.streamed {
			ch.endLine()
			fmt.Fprintln(ch.stdout, text)
		}
	}
	ch.endLine()
	var failed *aguistate.RunError
	switch {
	case errors.As(err, &failed):
		ch.failed = true
		if failed.Code != "" {
			fmt.Fprintf(ch.stderr, "error: run failed: %s (code %s)\n", failed.Message, failed.Code)
		} else {
			fmt.Fprintf(ch.stderr, "error: run failed: %s\n", failed.Message)
		}
	case err != nil:
		ch.fail(err)
	}
	for _, in := range res.Interrupts {
		fmt.Fprintln(ch.stderr, "interrupt:", in)
	}
}

// command returns the Func of the -tool tc: it runs the command with the
// call's arguments on standard input, its standard error going to the
// chat's, and returns its standard output less one final newline.
func (ch *chat) command(tc toolCommand) func(context.Context, aguistate.ToolCall) (string, error) {
	return func(ctx context.Context, call aguistate.ToolCall) (string, error) {
		cmd := exec.CommandContext(ctx, "sh", "-c", tc.command)
		cmd.Stdin = strings.NewReader(call.Arguments)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, ch.stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("-tool %s: %w", tc.name, err)
		}
		result := strings.TrimSuffix(strings.TrimSuffix(out.String(), "\n"), "\r")
		ch.endLine()
		fmt.Fprintf(ch.stdout, "tool result: %s %s\n", tc.name, result)
		return result, nil
	}
}

// onChange prints what each event of a run did.
func (ch *chat) onChange(change aguistate.Change) {
	if change.Event.Type == "" {
		return // a local change: the user's own message, a tool's result or the run input
	}
	ch.clearWaiting()
	if change.Warning != nil {
		ch.endLine()
		fmt.Fprintln(ch.stderr, "warning:", change.Warning)
	}
	for _, p := range change.Pieces {
		switch {
		case p.ToolCallID != "":
			if p.End {
				ch.showCall(p.MessageID, p.ToolCallID)
			}
		case p.Role == "assistant":
			ch.streamed = true
			if p.Text != "" {
				fmt.Fprint(ch.stdout, p.Text)
				ch.midLine = true
			}
			if p.End {
				ch.endLine()
			}
		}
	}
	if change.StateChanged {
		ch.endLine()
		fmt.Fprintln(ch.stdout, "state:", stateSummary(change.Event))
	}
}

// showCall prints the tool call id of message msg once, when it has ended.
func (ch *chat) showCall(msg, id string) {
	m, ok := ch.c.Message(msg)
	if !ok || ch.shown[id] {
		return
	}
	for _, call := range m.ToolCalls() {
		if call.ID == id {
			ch.shown[id] = true
			ch.endLine()
			fmt.Fprintf(ch.stdout, "tool call: %s %s\n", call.Name, call.Arguments)
			return
		}
	}
}

// stateSummary sums up in one line what an event did to the state.
func stateSummary(ev aguistate.Event) string {
	switch ev.Type {
	case "STATE_SNAPSHOT":
		var snap json.RawMessage
		_ = ev.Value().DecodeLenient("/snapshot", &snap)
		return fmt.Sprintf("snapshot (%d bytes)", len(snap))
	case "STATE_DELTA":
		var ops []struct {
			Op    string          `json:"op"`
			Path  string          `json:"path"`
			Value json.RawMessage `json:"value"`
		}
		_ = ev.Value().DecodeLenient("/delta", &ops)
		parts := make([]string, 0, len(ops))
		for _, op := range ops {
			part := op.Op + " " + op.Path
			if op.Value != nil && op.Op != "test" {
				part += " = " + shorten(string(op.Value), 40)
			}
			parts = append(parts, part)
		}
		return strings.Join(parts, ", ")
	}
	return "set by " + ev.Type // a run input's state
}

// shorten cuts s to at most n bytes, at a character boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// fail reports an error and marks the session failed.
func (ch *chat) fail(err error) {
	ch.failed = true
	ch.endLine()
	fmt.Fprintln(ch.stderr, "error:", err)
}

// endLine ends the line of assistant text on standard output, if one is open.
func (ch *chat) endLine() {
	if ch.midLine {
		fmt.Fprintln(ch.stdout)
		ch.midLine = false
	}
}

// prompt shows the prompt, on a terminal only: "NAME> " while a call of
// NAME waits for its result, "> " otherwise.
func (ch *chat) prompt() {
	if !ch.tty {
		return
	}
	if calls := ch.c.PendingToolCalls(); len(calls) > 0 && len(ch.c.Interrupts()) == 0 {
		fmt.Fprint(ch.stderr, calls[0].Name+"> ")
		return
	}
	fmt.Fprint(ch.stderr, "> ")
}

// clearWaiting erases the waiting indicator, if it is shown.
func (ch *chat) clearWaiting() {
	if ch.waiting {
		fmt.Fprint(ch.stderr, "\r\033[K")
		ch.waiting = false
	}
}
