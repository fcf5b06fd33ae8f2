// Command httpagent runs one run of an AG-UI agent over HTTP and prints the
// state and messages the thread ends with.
//
// Usage:
//
//	go run ./examples/httpagent -url URL [-H 'Name: value']... [-input RUN_INPUT.json] [-timeout 5m]
//
// It runs the agent at URL (AG-UI HTTP transport) with
// [aguistate.Consumer.RunAgent]. -H sets one request header, such as
// -H 'Authorization: Bearer TOKEN'; it may repeat. -input names a
// RunAgentInput JSON file: its state and messages are the starting value,
// and its threadId, runId, parentRunId, tools, context, forwardedProps and
// resume are sent as they are. Without it the input is minimal: state {},
// no messages, a generated threadId and runId. -timeout bounds the whole
// run; 0 means no limit.
//
// Standard output gets one JSON object {"state": ..., "messages": [...]},
// also after a failure (then it holds every event that arrived whole).
// Standard error gets a line "warning: event N (TYPE): ..." for each
// skipped event, "error: run failed: MESSAGE" (and " (code CODE)") when
// the agent ends the run with RUN_ERROR, and "error: ..." when the run
// fails otherwise. The exit status is 0, 1 after a failed run (RUN_ERROR,
// a fatal event, a transport or HTTP error), or 2 for bad usage or an
// unreadable input file.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/examples/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("httpagent", flag.ContinueOnError)
	flags.SetOutput(stderr)
	url := flags.String("url", "", "the agent's run `URL` (required)")
	header := cli.Header{}
	flags.Var(header, "H", "a request `header` 'Name: value' for every run; may repeat")
	inputPath := flags.String("input", "", "RunAgentInput JSON `file` to send (default: a minimal input)")
	timeout := flags.Duration("timeout", 5*time.Minute, "longest the run may take; 0 means no limit")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: httpagent -url URL [-H 'Name: value']... [-input RUN_INPUT.json] [-timeout DURATION]")
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

	c := aguistate.New(nil)
	c.Subscribe(func(ch aguistate.Change) {
		if ch.Warning != nil {
			fmt.Fprintln(stderr, "warning:", ch.Warning)
		}
	})
	var opts aguistate.RunOptions
	if *inputPath != "" {
		in, err := cli.LoadInput(c, *inputPath)
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 2
		}
		opts = aguistate.RunOptions{RunID: in.RunID, ParentRunID: in.ParentRunID, Tools: in.Tools,
			Context: in.Context, ForwardedProps: in.ForwardedProps, Resume: in.Resume}
	}

	ctx := context.Background()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	status := 0
	agent := &aguistate.Agent{URL: *url, Header: http.Header(header)}
	if _, err := c.RunAgent(ctx, agent, &opts); err != nil {
		var failed *aguistate.RunError
		if errors.As(err, &failed) {
			fmt.Fprintln(stderr, runFailed(failed))
		} else {
			fmt.Fprintln(stderr, "error:", err)
		}
		status = 1
	}
	out := struct {
		State    aguistate.Value     `json:"state"`
		Messages []aguistate.Message `json:"messages"`
	}{c.State(), c.Messages()}
	if out.Messages == nil {
		out.Messages = []aguistate.Message{}
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 2
	}
	return status
}

// runFailed is the line that reports a RUN_ERROR.
func runFailed(e *aguistate.RunError) string {
	if e.Code != "" {
		return fmt.Sprintf("error: run failed: %s (code %s)", e.Message, e.Code)
	}
	return "error: run failed: " + e.Message
}
