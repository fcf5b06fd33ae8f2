// Runnable examples of the test kit, checked by go test.

package agenttest_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/agenttest"
)

// t stands for the *testing.T of the test that the example's body would
// be: it reports what fails to standard output.
var t = &printT{}

// New serves turns in order. A frontend's test end to end: the agent asks
// for a tool that the frontend runs in Go, gets its result in the next
// run's input and answers. The frontend prints the answer as it streams,
// piece by piece. In a test, t is the test's *testing.T.
func ExampleNew() {
	srv := agenttest.New(t,
		agenttest.Turn{agenttest.Text("Let me look."), agenttest.ToolCall("get_weather", `{"city":"Rome"}`)},
		agenttest.Turn{agenttest.TextChunks("Sunny in Rome, 24 °C.")},
	)
	defer srv.Close()

	c := aguistate.New(nil)
	c.Subscribe(func(ch aguistate.Change) {
		for _, p := range ch.Pieces {
			if p.Role == "assistant" && p.ToolCallID == "" {
				fmt.Print(p.Text)
				if p.End {
					fmt.Println()
				}
			}
		}
	})
	weather := aguistate.Tool{Name: "get_weather", Description: "The weather in a city.",
		Func: func(ctx context.Context, call aguistate.ToolCall) (string, error) {
			return `{"sky":"clear","celsius":24}`, nil
		}}
	if err := c.AddMessages(aguistate.UserMessage("Weather in Rome?")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunTools(context.Background(), srv.Agent(), []aguistate.Tool{weather}, nil); err != nil {
		t.Fatal(err)
	}

	in := srv.Inputs()
	last := in[len(in)-1].Messages
	fmt.Println(len(in), "runs; the second one sent the tool's result:", last[len(last)-1].Text())
	fmt.Println("tools sent:", strings.Contains(string(in[0].Tools), `"get_weather"`))
	// Output:
	// Let me look.
	// Sunny in Rome, 24 °C.
	// 2 runs; the second one sent the tool's result: {"sky":"clear","celsius":24}
	// tools sent: true
}

// A run that ends with an interrupt, and its resume: the script reads the
// input to tell the two apart.
func ExampleNewFunc() {
	srv := agenttest.NewFunc(t, func(in aguistate.RunAgentInput) agenttest.Turn {
		if in.Resume == nil {
			return agenttest.Turn{agenttest.Interrupt("i1", "confirm", "Book the 9am flight?")}
		}
		return agenttest.Turn{agenttest.Text("Booked.")}
	})
	defer srv.Close()

	c := aguistate.New(nil)
	res, _ := c.RunAgent(context.Background(), srv.Agent(), nil)
	fmt.Println(res.Outcome, res.Interrupts[0])
	resume, _ := c.Resume(func(aguistate.Value) (any, bool) { return true, true })
	res, _ = c.RunAgent(context.Background(), srv.Agent(), &aguistate.RunOptions{Resume: resume})
	fmt.Println(res.Outcome, res.NewMessages[0].Text())
	// Output:
	// interrupt {"id":"i1","reason":"confirm","message":"Book the 9am flight?"}
	// success Booked.
}

// printT is an agenttest.TB that prints what fails.
type printT struct{}

func (*printT) Helper()                           {}
func (*printT) Cleanup(func())                    {}
func (*printT) Errorf(format string, args ...any) { fmt.Printf("error: "+format+"\n", args...) }
func (*printT) Fatal(args ...any)                 { fmt.Println(append([]any{"fatal:"}, args...)...) }
