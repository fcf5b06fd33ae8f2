// Command chat is a terminal chat with any AG-UI agent.
//
// Usage:
//
//	go run ./examples/chat -url URL [-H 'Name: value']... [-input RUN_INPUT.json]
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
// Standard output gets the assistant's text as it streams, piece by piece,
// a line "tool call: NAME ARGUMENTS" when a tool call ends, and a line
// "state: ..." that sums up each change of the state.
//
// Standard error gets "interrupt: {...}" (the interrupt's JSON) for each
// interrupt a run leaves pending. The next input line answers all of them
// and the resumed run starts at once: "/cancel" cancels them; any other
// line resolves each, with the line as the payload if it is JSON, or else
// the line as a JSON string. A RUN_ERROR gives "error: run failed:
// MESSAGE" (and " (code CODE)"), any other failure "error: ...", and a
// skipped event "warning: ..."; the chat goes on with the next line.
//
// When standard input is a terminal, standard error also gets a prompt and
// a waiting indicator while a run has sent nothing yet; otherwise nothing
// but the above is printed.
//
// At the end of input the exit status is 0 if every run succeeded or was
// interrupted and answered, 1 if any run failed (RUN_ERROR, a fatal event,
// a transport or HTTP error) or interrupts were left unanswered, and 2 for
// bad usage or an unreadable input file.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
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
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: chat -url URL [-H 'Name: value']... [-input RUN_INPUT.json]")
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
		printed: make(map[string]int), shown: make(map[string]bool),
	}
	if *inputPath != "" {
		in, err := cli.LoadInput(ch.c, *inputPath)
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 2
		}
		ch.opts = aguistate.RunOptions{Tools: in.Tools, Context: in.Context, ForwardedProps: in.ForwardedProps}
	}
	ch.c.Subscribe(ch.onChange)
	return ch.loop(stdin)
}

// chat is one session: a thread, the agent, and what was printed of it.
type chat struct {
	c              *aguistate.Consumer
	agent          *aguistate.Agent
	opts           aguistate.RunOptions // -input's tools, context and forwardedProps
	stdout, stderr io.Writer
	tty            bool

	printed map[string]int  // message id → bytes of its text printed
	shown   map[string]bool // tool call ids printed
	last    string          // the id of the message printed last
	midLine bool            // standard output does not end in a newline
	waiting bool            // the waiting indicator is on standard error
	failed  bool            // a run failed
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
		if len(ch.c.Interrupts()) > 0 {
			resume, err := ch.c.Resume(answer(line))
			if err != nil {
				ch.fail(err)
				ch.prompt()
				continue
			}
			opts.Resume = resume
		} else if err := ch.c.AddMessages(aguistate.UserMessage(line)); err != nil {
			ch.fail(err)
			ch.prompt()
			continue
		}
		ch.runOnce(&opts)
		ch.prompt()
	}
	if err := lines.Err(); err != nil {
		ch.fail(fmt.Errorf("reading standard input: %w", err))
	}
	if n := len(ch.c.Interrupts()); n > 0 {
		ch.fail(fmt.Errorf("the input ended with %d interrupts unanswered", n))
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

// runOnce runs the agent once and reports how the run ended.
func (ch *chat) runOnce(opts *aguistate.RunOptions) {
	for _, m := range ch.c.Messages() { // print only what this run adds
		ch.printed[m.ID()] = len(m.Text())
	}
	if ch.tty {
		fmt.Fprint(ch.stderr, "(waiting…)")
		ch.waiting = true
	}
	res, err := ch.c.RunAgent(context.Background(), ch.agent, opts)
	ch.clearWaiting()
	for _, m := range res.NewMessages { // calls that ended without TOOL_CALL_END
		for _, call := range m.ToolCalls() {
			ch.showCall(call)
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

// onChange prints what each event of a run did.
func (ch *chat) onChange(change aguistate.Change) {
	if change.Event.Type == "" {
		return // a local change: the user's own message or the run input
	}
	ch.clearWaiting()
	if change.Warning != nil {
		ch.endLine()
		fmt.Fprintln(ch.stderr, "warning:", change.Warning)
	}
	for _, id := range change.Added {
		ch.showText(id)
	}
	for _, id := range change.Replaced {
		ch.showText(id)
	}
	if change.Event.Type == "TOOL_CALL_END" {
		var id string
		if change.Event.Value().DecodeLenient("/toolCallId", &id) == nil {
			for _, m := range ch.c.Messages() {
				for _, call := range m.ToolCalls() {
					if call.ID == id {
						ch.showCall(call)
					}
				}
			}
		}
	}
	if change.StateChanged {
		ch.endLine()
		fmt.Fprintln(ch.stdout, "state:", stateSummary(change.Event))
	}
}

// showText prints the part of an assistant message's text not printed yet.
func (ch *chat) showText(id string) {
	for _, m := range ch.c.Messages() {
		if m.ID() != id || m.Role() != "assistant" {
			continue
		}
		text := m.Text()
		done := ch.printed[id]
		if done > len(text) { // rewritten shorter, by a snapshot: print it again
			ch.endLine()
			done = 0
		}
		piece := text[done:]
		if piece == "" {
			return
		}
		if ch.last != id {
			ch.endLine()
		}
		fmt.Fprint(ch.stdout, piece)
		ch.printed[id], ch.last, ch.midLine = len(text), id, !strings.HasSuffix(text, "\n")
		return
	}
}

// showCall prints a tool call once.
func (ch *chat) showCall(call aguistate.ToolCall) {
	if ch.shown[call.ID] {
		return
	}
	ch.shown[call.ID] = true
	ch.endLine()
	fmt.Fprintf(ch.stdout, "tool call: %s %s\n", call.Name, call.Arguments)
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
	ch.last = ""
}

// prompt shows the prompt, on a terminal only.
func (ch *chat) prompt() {
	if ch.tty {
		fmt.Fprint(ch.stderr, "> ")
	}
}

// clearWaiting erases the waiting indicator, if it is shown.
func (ch *chat) clearWaiting() {
	if ch.waiting {
		fmt.Fprint(ch.stderr, "\r\033[K")
		ch.waiting = false
	}
}
