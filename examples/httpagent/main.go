// Command httpagent runs one run of an AG-UI agent over HTTP and prints the
// state and messages the thread ends with.
//
// Usage:
//
//	go run ./examples/httpagent -url URL [-input RUN_INPUT.json] [-timeout 5m]
//
// It POSTs a RunAgentInput to URL (AG-UI HTTP transport) and applies the
// agent's event stream with [aguistate.Consumer.RunAgent]. -input names a
// RunAgentInput JSON file: its state and messages are the starting value,
// and its threadId, runId, parentRunId, tools, context, forwardedProps and
// resume are sent as they are. Without it the input is minimal: state {},
// no messages, a generated threadId and runId. -timeout bounds the whole
// run; 0 means no limit.
//
// Standard output gets one JSON object {"state": ..., "messages": [...]},
// also after a failure (then it holds every event that arrived whole).
// Standard error gets a line "warning: event N (TYPE): ..." for each
// skipped event, "run error: EVENT" when the agent ends the run with
// RUN_ERROR, and "error: ..." when the run fails. The exit status is 0, 1
// after a failed run or a RUN_ERROR, or 2 for bad usage or an unreadable
// input file.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aguistate/aguistate"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("httpagent", flag.ContinueOnError)
	flags.SetOutput(stderr)
	url := flags.String("url", "", "the agent's run `URL` (required)")
	inputPath := flags.String("input", "", "RunAgentInput JSON `file` to send (default: a minimal input)")
	timeout := flags.Duration("timeout", 5*time.Minute, "longest the run may take; 0 means no limit")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: httpagent -url URL [-input RUN_INPUT.json] [-timeout DURATION]")
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
	runError := false
	c.Subscribe(func(ch aguistate.Change) {
		if ch.Warning != nil {
			fmt.Fprintln(stderr, "warning:", ch.Warning)
		}
		if ch.Event.Type == "RUN_ERROR" {
			runError = true
			fmt.Fprintln(stderr, "run error:", ch.Event.Value())
		}
	})
	var base aguistate.RunAgentInput
	if *inputPath != "" {
		var err error
		if base, err = loadInput(c, *inputPath); err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 2
		}
	}
	input := c.NextInput(base) // a new thread and run id when the input names none

	ctx := context.Background()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	status := 0
	if err := c.RunAgent(ctx, nil, *url, input); err != nil {
		fmt.Fprintln(stderr, "error:", err)
		status = 1
	} else if runError {
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

// loadInput loads the RunAgentInput file at path into c (its state and
// messages, exactly) and returns its other fields, which are sent as they
// are.
func loadInput(c *aguistate.Consumer, path string) (aguistate.RunAgentInput, error) {
	var base aguistate.RunAgentInput
	data, err := os.ReadFile(path)
	if err != nil {
		return base, err
	}
	if err := c.StartRun(data); err != nil {
		return base, fmt.Errorf("%s: %w", path, err)
	}
	// Unmarshal keeps the fields it has; NextInput then sets state and
	// messages from c.
	if err := json.Unmarshal(data, &base); err != nil {
		return base, fmt.Errorf("%s: %w", path, err)
	}
	return base, nil
}
