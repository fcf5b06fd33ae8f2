// Command replay applies a recorded AG-UI event stream to a Consumer and
// prints the state and messages it ends with.
//
// Usage:
//
//	go run ./examples/replay [-input RUN_INPUT.json] [-next-input] [STREAM]
//
// STREAM (default: standard input) is a server-sent event stream, JSON
// Lines, or a JSON array of events. -input names a RunAgentInput JSON file
// whose state and messages are the starting value; without it the Consumer
// starts from {} and no messages.
//
// Standard output gets one JSON object {"state": ..., "messages": [...]},
// also after a fatal error (then it holds the value from before the
// rejected event). Standard error gets a line "warning: event N (TYPE): ..."
// for each skipped event and "error: event N (TYPE): ..." for a fatal one,
// with N counting events from 1, and at the end a line "interrupt: {...}"
// for each interrupt the run left pending. The exit status is 0, 1 after a fatal
// error or for a stream with no event (a file that is no AG-UI stream reads
// as SSE with nothing in it), or 2 for bad usage or an unreadable file.
//
// With -next-input, standard output gets instead the RunAgentInput of the
// next run on the thread: the state and messages held (without activity
// messages, which never travel to the producer), the thread id of -input or
// of the stream's RUN_STARTED (generated when neither names one), a new run
// id, and -input's tools, context and forwardedProps.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/examples/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("replay", flag.ContinueOnError)
	flags.SetOutput(stderr)
	inputPath := flags.String("input", "", "RunAgentInput JSON `file` giving the starting state and messages")
	nextInput := flags.Bool("next-input", false, "print the next run's RunAgentInput instead of the state and messages")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: replay [-input RUN_INPUT.json] [-next-input] [STREAM]")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err == flag.ErrHelp {
		return 0
	} else if err != nil {
		return 2
	}
	if flags.NArg() > 1 {
		flags.Usage()
		return 2
	}

	var next aguistate.RunOptions // what -next-input carries over from -input
	c := aguistate.New(nil)
	events := 0
	c.Subscribe(func(ch aguistate.Change) {
		if ch.Event.Type != "" { // not a local change, such as -input's
			events++
		}
		if ch.Warning != nil {
			fmt.Fprintln(stderr, "warning:", ch.Warning)
		}
	})
	if *inputPath != "" {
		in, err := cli.LoadInput(c, *inputPath)
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 2
		}
		// The next run is a new run of the same thread, with the same tools.
		next = aguistate.RunOptions{Tools: in.Tools, Context: in.Context, ForwardedProps: in.ForwardedProps}
	}
	stream := stdin
	if flags.NArg() == 1 {
		f, err := os.Open(flags.Arg(0))
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 2
		}
		defer f.Close()
		stream = f
	}

	status := 0
	if err := c.Run(context.Background(), stream); err != nil {
		fmt.Fprintln(stderr, "error:", err)
		status = 1
	} else if events == 0 {
		fmt.Fprintln(stderr, "error: the stream holds no event: an AG-UI stream is SSE with data: lines, JSON Lines or a JSON array of events")
		status = 1
	}
	for _, in := range c.Interrupts() {
		fmt.Fprintln(stderr, "interrupt:", in)
	}
	var out any = struct {
		State    aguistate.Value     `json:"state"`
		Messages []aguistate.Message `json:"messages"`
	}{c.State(), append([]aguistate.Message{}, c.Messages()...)}
	if *nextInput {
		out = c.NextInput(&next)
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
