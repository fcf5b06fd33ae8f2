// Runnable examples, checked by go test.

package aguistate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/agenttest"
)

// The agent loop: add the user's message, run the agent, print its answer,
// and tell a failed run from a broken one. The agent here is a scripted
// one (package agenttest) on an httptest server, which answers the run
// with one assistant message; the code after it is the README's first
// screen.
func ExampleConsumer_RunAgent() {
	srv := agenttest.New(exampleTB{}, agenttest.Turn{agenttest.TextChunks("Sunny, 24 °C.")})
	defer srv.Close()
	url, ctx := srv.URL, context.Background()

	agent := &aguistate.Agent{URL: url} // Header, Client: optional
	c := aguistate.New(nil)             // one Consumer per thread
	if err := c.AddMessages(aguistate.UserMessage("Weather in Rome?")); err != nil {
		log.Fatal(err)
	}
	res, err := c.RunAgent(ctx, agent, nil)
	var failed *aguistate.RunError
	switch {
	case errors.As(err, &failed):
		fmt.Println("the agent says the run failed:", failed.Message)
	case err != nil:
		log.Fatal(err) // HTTP status, transport, malformed event, ctx
	}
	for _, m := range res.NewMessages {
		fmt.Println(m.Role()+":", m.Text())
	}
	// Output: assistant: Sunny, 24 °C.
}

// TestReadmeIsExample checks that the README's Go snippets are in the
// bodies of examples, line for line, so that they compile and run as
// written: the first in ExampleConsumer_RunAgent, the second in
// ExampleConsumer_RunTools.
func TestReadmeIsExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	rest := string(readme)
	for _, example := range []string{"ExampleConsumer_RunAgent", "ExampleConsumer_RunTools"} {
		var snippet string
		_, rest, _ = strings.Cut(rest, "```go\n")
		snippet, rest, _ = strings.Cut(rest, "```")
		_, body, _ := strings.Cut(string(src), "\nfunc "+example+"() {")
		body, _, _ = strings.Cut(body, "\n}\n")
		var indented strings.Builder
		for line := range strings.Lines(snippet) {
			if line != "\n" {
				line = "\t" + line
			}
			indented.WriteString(line)
		}
		if snippet == "" || !strings.Contains(body, indented.String()) {
			t.Errorf("the README's Go snippet is not in %s:\n%s", example, snippet)
		}
	}
}

// A chat turn with a client-side tool: RunTools runs the agent, answers
// each call of get_weather that a run leaves for the client with its Go
// function, adds the result and runs again, and the answer prints piece by
// piece as it streams. The agent is the test kit's (package agenttest),
// which asks for the tool and then answers; the code after it is the
// README's.
func ExampleConsumer_RunTools() {
	srv := agenttest.New(exampleTB{},
		agenttest.Turn{agenttest.ToolCall("get_weather", `{"city":"Rome"}`)},
		agenttest.Turn{agenttest.TextChunks("Sunny in Rome, 24 °C.")},
	)
	defer srv.Close()
	agent, ctx := srv.Agent(), context.Background()

	c := aguistate.New(nil)
	c.Subscribe(func(ch aguistate.Change) { // the answer, as it streams
		for _, p := range ch.Pieces {
			if p.Role == "assistant" && p.ToolCallID == "" {
				fmt.Print(p.Text)
				if p.End {
					fmt.Println()
				}
			}
		}
	})
	weather := aguistate.Tool{
		Name:        "get_weather",
		Description: "The weather in a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`),
		Func: func(ctx context.Context, call aguistate.ToolCall) (string, error) {
			var args struct{ City string }
			if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
				return "", err
			}
			return fmt.Sprintf(`{"city":%q,"sky":"clear"}`, args.City), nil
		},
	}
	if err := c.AddMessages(aguistate.UserMessage("Weather in Rome?")); err != nil {
		log.Fatal(err)
	}
	res, err := c.RunTools(ctx, agent, []aguistate.Tool{weather}, nil)
	if err != nil {
		log.Fatal(err) // a Func's error, a run's (see RunAgent), or ErrLimit
	}
	fmt.Println(res.Outcome, len(res.PendingToolCalls)) // "success" 0 once every call is answered
	fmt.Println(len(res.NewMessages), "messages:", res.NewMessages[1].Text())
	// Output:
	// Sunny in Rome, 24 °C.
	// success 0
	// 3 messages: {"city":"Rome","sky":"clear"}
}

// The thread goes on: each turn adds the user's next message and runs the
// agent again, and each run's input carries the whole thread. The agent is
// the test kit's, which records what each run was sent.
func ExampleConsumer_AddMessages() {
	srv := agenttest.New(exampleTB{},
		agenttest.Turn{agenttest.Text("Sunny.")},
		agenttest.Turn{agenttest.Text("Rain tomorrow.")},
	)
	defer srv.Close()

	c := aguistate.New(nil)
	for _, line := range []string{"Weather in Rome?", "And tomorrow?"} {
		if err := c.AddMessages(aguistate.UserMessage(line)); err != nil {
			log.Fatal(err)
		}
		res, err := c.RunAgent(context.Background(), srv.Agent(), nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.NewMessages[0].Text())
	}
	in := srv.Inputs()
	fmt.Println("the second run was sent", len(in[1].Messages), "messages")
	// Output:
	// Sunny.
	// Rain tomorrow.
	// the second run was sent 3 messages
}

// An application that answers the client-side tools itself, rather than
// with RunTools: the run leaves the call pending, the application adds a
// tool message that answers it, and runs again.
func ExampleConsumer_PendingToolCalls() {
	srv := agenttest.New(exampleTB{},
		agenttest.Turn{agenttest.ToolCall("confirm", `{"question":"Book it?"}`)},
		agenttest.Turn{agenttest.Text("Booked.")},
	)
	defer srv.Close()
	ctx := context.Background()

	c := aguistate.New(nil)
	_ = c.AddMessages(aguistate.UserMessage("Book the 9am flight"))
	if _, err := c.RunAgent(ctx, srv.Agent(), nil); err != nil {
		log.Fatal(err)
	}
	for _, call := range c.PendingToolCalls() {
		fmt.Println("pending:", call.Name, call.Arguments)
		if err := c.AddMessages(aguistate.ToolMessage(call.ID, `{"confirmed":true}`)); err != nil {
			log.Fatal(err)
		}
	}
	res, err := c.RunAgent(ctx, srv.Agent(), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.NewMessages[0].Text(), len(c.PendingToolCalls()))
	// Output:
	// pending: confirm {"question":"Book it?"}
	// Booked. 0
}

// New takes Options (nil for the defaults). Here ValidateState refuses a
// state the application cannot act on: the event is skipped with a warning
// wrapping ErrStateRejected, and the state is marked diverged until a
// state that passes arrives.
func ExampleNew() {
	c := aguistate.New(&aguistate.Options{
		MaxMessages: 100,
		ValidateState: func(state aguistate.Value) error {
			var cart struct {
				Total float64 `json:"total"`
			}
			if err := state.Decode("", &cart); err != nil {
				return err
			}
			if cart.Total < 0 {
				return errors.New("negative total")
			}
			return nil
		},
	})
	c.Subscribe(func(ch aguistate.Change) {
		if ch.Warning != nil {
			fmt.Println("skipped:", errors.Is(ch.Warning, aguistate.ErrStateRejected))
		}
	})
	_ = c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"total":12.5}}`))
	_ = c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/total","value":-1}]}`))
	fmt.Println(c.State(), c.Diverged())
	// Output:
	// skipped: true
	// {"total":12.5} true
}

// exampleTB is the agenttest.TB of the examples, which are no tests: it
// prints what fails.
type exampleTB struct{}

func (exampleTB) Helper()                           {}
func (exampleTB) Cleanup(func())                    {}
func (exampleTB) Errorf(format string, args ...any) { fmt.Printf("error: "+format+"\n", args...) }

// Text as it streams, piece by piece: each Piece says which message grew
// by what, and when a message or a tool call starts and ends, for a
// producer that sends only chunks (as here) as for one that sends START,
// CONTENT and END.
func ExampleConsumer_Subscribe_text() {
	c := aguistate.New(nil)
	c.Subscribe(func(ch aguistate.Change) {
		for _, p := range ch.Pieces {
			switch {
			case p.Start && p.ToolCallID != "":
				fmt.Printf("[call %s] ", p.ToolName)
			case p.Start:
				fmt.Printf("[%s] ", p.Role)
			}
			fmt.Print(p.Text)
			if p.End {
				fmt.Println()
			}
		}
	})
	stream := strings.NewReader(`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"REASONING_MESSAGE_CHUNK","messageId":"r1","delta":"The user wants "}
{"type":"REASONING_MESSAGE_CHUNK","delta":"the weather."}
{"type":"TEXT_MESSAGE_CHUNK","messageId":"a1","delta":"Let me "}
{"type":"TEXT_MESSAGE_CHUNK","delta":"look."}
{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"get_weather","parentMessageId":"a1","delta":"{\"city\":"}
{"type":"TOOL_CALL_CHUNK","delta":"\"Rome\"}"}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
`)
	if err := c.Run(context.Background(), stream); err != nil {
		fmt.Println(err)
	}
	// Output:
	// [reasoning] The user wants the weather.
	// [assistant] Let me look.
	// [call get_weather] {"city":"Rome"}
}

// Read a server-sent event stream into a Consumer and print the state.
func ExampleConsumer_Run() {
	body := strings.NewReader(`data: {"type":"STATE_SNAPSHOT","snapshot":{"count":1,"items":[]}}

data: {"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":2},{"op":"add","path":"/items/-","value":"a"}]}

`)
	c := aguistate.New(nil)
	if err := c.Run(context.Background(), body); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.State())
	// Output: {"count":2,"items":["a"]}
}

// A well-formed patch that fails to apply is skipped as a whole, reported as
// a warning, and marks the state as diverged until the next snapshot.
func ExampleConsumer_Apply_skippedDelta() {
	c := aguistate.New(nil)
	c.Subscribe(func(ch aguistate.Change) {
		if ch.Warning != nil {
			fmt.Println("warning:", errors.Is(ch.Warning, aguistate.ErrPatchFailed))
		}
	})
	_ = c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}`))
	_ = c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/a","value":2},{"op":"remove","path":"/missing"}]}`))
	fmt.Println(c.State(), c.Diverged())
	_ = c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"a":3}}`))
	fmt.Println(c.State(), c.Diverged())
	// Output:
	// warning: true
	// {"a":1} true
	// {"a":3} false
}

// A structurally malformed patch is fatal: the error names the event and
// the operation, and the Consumer keeps its value from before the event.
func ExampleConsumer_Apply_malformedPatch() {
	c := aguistate.New(nil)
	err := c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"merge","path":"/a","value":1}]}`))
	var pe *aguistate.PatchError
	fmt.Println(errors.Is(err, aguistate.ErrMalformedEvent), errors.As(err, &pe), pe.Op)
	fmt.Println(err)
	fmt.Println(c.State())
	// Output:
	// true true merge
	// aguistate: event 1 (STATE_DELTA): operation 0 (merge "/a"): malformed patch: unknown op "merge"
	// {}
}

// State is any JSON value, and numbers keep their exact digits.
func ExampleConsumer_State() {
	c := aguistate.New(nil)
	_ = c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":[12345678901234567890, 0.10, 1e2]}`))
	_ = c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"test","path":"/2","value":100},{"op":"add","path":"/-","value":null}]}`))
	fmt.Println(c.State())
	// Output: [12345678901234567890,0.10,1e2,null]
}

// A MESSAGES_SNAPSHOT reconciles by id: held messages are replaced in place,
// unseen ones appended, absent ones dropped, except activity messages while
// the snapshot carries none.
func ExampleConsumer_Messages() {
	c := aguistate.New(nil)
	_ = c.Apply([]byte(`{"type":"RUN_STARTED","threadId":"t1","runId":"r1","input":{"messages":[
		{"id":"u1","role":"user","content":"hi"},
		{"id":"x1","role":"activity","activityType":"PLAN","content":{"step":1}},
		{"id":"old","role":"assistant","content":"stale"}]}}`))
	_ = c.Apply([]byte(`{"type":"MESSAGES_SNAPSHOT","messages":[
		{"id":"a1","role":"assistant","content":"hello"},
		{"id":"u1","role":"user","content":"hi!"}]}`))
	for _, m := range c.Messages() {
		b, _ := m.MarshalJSON()
		fmt.Println(m.ID(), string(b))
	}
	// Output:
	// u1 {"id":"u1","role":"user","content":"hi!"}
	// x1 {"id":"x1","role":"activity","activityType":"PLAN","content":{"step":1}}
	// a1 {"id":"a1","role":"assistant","content":"hello"}
}

// A subscriber reads the messages a change names by id, without copying
// the list.
func ExampleConsumer_Message() {
	c := aguistate.New(nil)
	c.Subscribe(func(ch aguistate.Change) {
		for _, id := range append(ch.Added, ch.Replaced...) {
			if m, ok := c.Message(id); ok {
				fmt.Printf("%s %q\n", id, m.Text())
			}
		}
	})
	for _, ev := range []string{
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}`,
	} {
		_ = c.Apply([]byte(ev))
	}
	_, ok := c.Message("m2")
	fmt.Println(ok)
	// Output:
	// m1 ""
	// m1 "Hel"
	// m1 "Hello"
	// false
}

// Subscribers learn what each event changed.
func ExampleConsumer_Subscribe() {
	c := aguistate.New(nil)
	cancel := c.Subscribe(func(ch aguistate.Change) {
		fmt.Printf("%s state=%v added=%v replaced=%v removed=%v\n",
			ch.Event.Type, ch.StateChanged, ch.Added, ch.Replaced, ch.Removed)
	})
	defer cancel()
	_ = c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{}}`))
	_ = c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1}]}`))
	_ = c.Apply([]byte(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m1","role":"user","content":"x"}]}`))
	_ = c.Apply([]byte(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m2","role":"user","content":"y"}]}`))
	// Output:
	// STATE_SNAPSHOT state=false added=[] replaced=[] removed=[]
	// STATE_DELTA state=true added=[] replaced=[] removed=[]
	// MESSAGES_SNAPSHOT state=false added=[m1] replaced=[] removed=[]
	// MESSAGES_SNAPSHOT state=false added=[m2] replaced=[] removed=[m1]
}

// ReadEvents splits a stream into events without applying them.
func ExampleReadEvents() {
	stream := strings.NewReader("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n{\"type\":\"CUSTOM\",\"name\":\"ping\",\"value\":1}\n")
	for text, err := range aguistate.ReadEvents(stream, nil) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(string(text))
	}
	// Output:
	// {"type":"RUN_STARTED","threadId":"t","runId":"r"}
	// {"type":"CUSTOM","name":"ping","value":1}
}

// An Agent is the URL of an agent's run endpoint, with the headers of every
// request (here a bearer token). RunAgent sends it the thread's next input,
// the state included, and applies the stream it answers with. Here the
// agent is an httptest server that echoes the state it was sent and counts
// one more.
func ExampleAgent() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			ThreadID, RunID string
			State           json.RawMessage
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":%q,\"runId\":%q}\n\n", in.ThreadID, in.RunID)
		fmt.Fprintf(w, "data: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"sent\":%s}}\n\n", in.State)
		io.WriteString(w, `data: {"type":"STATE_DELTA","delta":[{"op":"add","path":"/count","value":2}]}`+"\n\n")
		fmt.Fprintf(w, "data: {\"type\":\"RUN_FINISHED\",\"threadId\":%q,\"runId\":%q,\"result\":\"done\"}\n\n", in.ThreadID, in.RunID)
	}))
	defer server.Close()

	agent := &aguistate.Agent{URL: server.URL, Header: http.Header{"Authorization": {"Bearer secret"}}}
	c := aguistate.New(nil)
	_ = c.SetState(map[string]int{"count": 1})
	res, err := c.RunAgent(context.Background(), agent, &aguistate.RunOptions{RunID: "r1"})
	if err != nil {
		var he *aguistate.HTTPError
		if errors.As(err, &he) {
			fmt.Println("agent answered", he.StatusCode)
		}
		fmt.Println(err)
		return
	}
	fmt.Println(res.Outcome, res.Result, c.RunID(), c.State())
	// Output: success "done" r1 {"sent":{"count":1},"count":2}
}

// A run that ends with an interrupt waits for an answer: Resume builds the
// entries that answer every pending interrupt, and the next run carries
// them. RunAgent refuses to start while one is left unanswered.
func ExampleConsumer_Resume() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Resume json.RawMessage }
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"type":"RUN_STARTED","threadId":"t1","runId":"r"}`+"\n\n")
		if in.Resume == nil {
			io.WriteString(w, `data: {"type":"RUN_FINISHED","threadId":"t1","runId":"r","outcome":{"type":"interrupt",`+
				`"interrupts":[{"id":"i1","reason":"confirm","message":"Book the flight?"}]}}`+"\n\n")
			return
		}
		fmt.Fprintf(w, "data: {\"type\":\"TEXT_MESSAGE_CHUNK\",\"messageId\":\"a1\",\"delta\":%q}\n\n", "resume: "+string(in.Resume))
		io.WriteString(w, `data: {"type":"RUN_FINISHED","threadId":"t1","runId":"r"}`+"\n\n")
	}))
	defer server.Close()

	agent := &aguistate.Agent{URL: server.URL}
	c := aguistate.New(nil)
	_ = c.AddMessages(aguistate.UserMessage("Book me a flight to Rome"))
	res, _ := c.RunAgent(context.Background(), agent, nil)
	fmt.Println(res.Outcome, res.Interrupts)

	_, err := c.RunAgent(context.Background(), agent, nil)
	fmt.Println(err)

	resume, _ := c.Resume(func(interrupt aguistate.Value) (any, bool) {
		return map[string]bool{"approved": true}, true // false would cancel it
	})
	res, _ = c.RunAgent(context.Background(), agent, &aguistate.RunOptions{Resume: resume})
	fmt.Println(res.Outcome, res.NewMessages[0].Text(), len(c.Interrupts()))
	// Output:
	// interrupt [{"id":"i1","reason":"confirm","message":"Book the flight?"}]
	// aguistate: a run cannot start while interrupts are pending that resume does not answer: "i1"
	// success resume: [{"interruptId":"i1","status":"resolved","payload":{"approved":true}}] 0
}

// A run that fails leaves in the thread what arrived before the failure. To
// retry from the thread as it was, take a checkpoint before the run and
// restore it: Restore returns a new Consumer (subscribe to it again).
func ExampleConsumer_Checkpoint_retry() {
	runs := 0
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"type":"RUN_STARTED","threadId":"t1","runId":"r"}`+"\n\n")
		if runs == 1 {
			io.WriteString(w, `data: {"type":"TEXT_MESSAGE_CHUNK","messageId":"a1","delta":"Let me ch"}`+"\n\n"+
				`data: {"type":"RUN_ERROR","message":"model overloaded"}`+"\n\n")
			return
		}
		io.WriteString(w, `data: {"type":"TEXT_MESSAGE_CHUNK","messageId":"a2","delta":"Sunny."}`+"\n\n"+
			`data: {"type":"RUN_FINISHED","threadId":"t1","runId":"r"}`+"\n\n")
	}))
	defer server.Close()
	agent, ctx := &aguistate.Agent{URL: server.URL}, context.Background()

	c := aguistate.New(nil)
	_ = c.AddMessages(aguistate.UserMessage("Weather in Rome?"))
	saved := c.Checkpoint()
	if _, err := c.RunAgent(ctx, agent, nil); err != nil {
		fmt.Println(err, len(c.Messages()))
		if c, err = aguistate.Restore(saved, nil); err != nil {
			log.Fatal(err)
		}
		fmt.Println("restored:", len(c.Messages()))
	}
	res, err := c.RunAgent(ctx, agent, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Outcome, res.NewMessages[0].Text(), len(c.Messages()))
	// Output:
	// aguistate: run failed: model overloaded 2
	// restored: 1
	// success Sunny. 2
}

// Messages read typed: text, tool calls, the id of the call a tool message
// answers. MarshalJSON still gives each exactly as it arrived.
func ExampleMessage_ToolCalls() {
	c := aguistate.New(nil)
	_ = c.Apply([]byte(`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather","parentMessageId":"a1"}`))
	_ = c.Apply([]byte(`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"city\":\"Rome\"}"}`))
	_ = c.Apply([]byte(`{"type":"TOOL_CALL_END","toolCallId":"c1"}`))
	_ = c.AddMessages(aguistate.ToolMessage("c1", `{"sky":"clear"}`).WithID("t1"))
	for _, m := range c.Messages() {
		for _, call := range m.ToolCalls() {
			fmt.Println(m.Role(), call.ID, call.Name, call.Arguments)
		}
		if m.ToolCallID() != "" {
			b, _ := m.MarshalJSON()
			fmt.Println(m.Role(), m.ToolCallID(), m.Text(), string(b))
		}
	}
	// Output:
	// assistant c1 get_weather {"city":"Rome"}
	// tool c1 {"sky":"clear"} {"id":"t1","role":"tool","content":"{\"sky\":\"clear\"}","toolCallId":"c1"}
}

// A user message may carry AG-UI 1.0 content parts: text, then images,
// audio, video or documents by URL, base64 data or file id.
func ExampleUserMessage() {
	m := aguistate.UserMessage("What is in this picture?",
		aguistate.Part{Type: "image", Source: "url", Value: "https://example.com/cat.png", MIMEType: "image/png"}).WithID("u1")
	b, _ := m.MarshalJSON()
	fmt.Println(string(b))
	fmt.Println(m.Text(), len(m.Parts()))

	bad := aguistate.UserMessage("", aguistate.Part{Type: "image"})
	fmt.Println(aguistate.New(nil).AddMessages(bad))
	// Output:
	// {"id":"u1","role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image","source":{"type":"url","value":"https://example.com/cat.png","mimeType":"image/png"}}]}
	// What is in this picture? 2
	// aguistate: AddMessages: message 0: UserMessage: part 0: image part: source "" is not one of url, data and file
}

// Decode reads a part of the state into a Go value strictly: a member that
// names no field, a value of the wrong type, or a number that a float64
// would round is an error, and nothing is acted on.
func ExampleValue_Decode() {
	c := aguistate.New(nil)
	_ = c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{
		"cart":{"items":["tea","cake"],"total":12.5},
		"account":{"id":9007199254740993}}}`))

	var cart struct {
		Items []string `json:"items"`
		Total float64  `json:"total"`
	}
	if err := c.State().Decode("/cart", &cart); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cart.Items, cart.Total)

	var asFloat struct {
		ID float64 `json:"id"`
	}
	err := c.State().Decode("/account", &asFloat)
	fmt.Println(err)

	var asInt struct {
		ID int64 `json:"id"`
	}
	if err := c.State().Decode("/account", &asInt); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(asInt.ID)
	// Output:
	// [tea cake] 12.5
	// aguistate: cannot decode "/account": number 9007199254740993 does not fit a float64 exactly (it would become 9007199254740992) (at "/account/id")
	// 9007199254740993
}

// DecodeLenient reads the part of the state a struct models and ignores
// the members the agent adds; Decode refuses them.
func ExampleValue_DecodeLenient() {
	c := aguistate.New(nil)
	_ = c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"cart":{"total":12.5,"coupon":"SPRING"}}}`))
	var cart struct {
		Total float64 `json:"total"`
	}
	fmt.Println(c.State().Decode("/cart", &cart))
	fmt.Println(c.State().DecodeLenient("/cart", &cart), cart.Total)
	// Output:
	// aguistate: cannot decode "/cart": json: unknown field "coupon"
	// <nil> 12.5
}

// StartRun starts a run with its RunAgentInput, when the input is sent by
// other means than RunAgent: its state is the baseline of the run's
// deltas, and its messages are held.
func ExampleConsumer_StartRun() {
	var in aguistate.RunAgentInput
	_ = json.Unmarshal([]byte(`{"threadId":"t1","runId":"r1",
		"state":{"count":1},
		"messages":[{"id":"u1","role":"user","content":"count to 2"}]}`), &in)
	c := aguistate.New(nil)
	if err := c.StartRun(in); err != nil {
		fmt.Println(err)
		return
	}
	_ = c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":2}]}`))
	fmt.Println(c.ThreadID(), c.State(), len(c.Messages()))
	// Output: t1 {"count":2} 1
}

// NextInput builds the next run's input from what the Consumer holds:
// activity messages stay behind, and the application's tools and context
// ride along. Check Diverged first.
func ExampleConsumer_NextInput() {
	c := aguistate.New(nil)
	_ = c.Apply([]byte(`{"type":"RUN_STARTED","threadId":"t1","runId":"r1","input":{"state":{"step":1}}}`))
	_ = c.Apply([]byte(`{"type":"ACTIVITY_SNAPSHOT","messageId":"x1","activityType":"PLAN","content":{"s":1}}`))
	_ = c.Apply([]byte(`{"type":"TEXT_MESSAGE_START","messageId":"a1","role":"assistant"}`))
	_ = c.Apply([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"Which city?"}`))
	_ = c.Apply([]byte(`{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`))
	if c.Diverged() {
		fmt.Println("ask the agent for a snapshot first")
		return
	}
	_ = c.AddMessages(aguistate.UserMessage("Rome").WithID("u2"))
	in := c.NextInput(&aguistate.RunOptions{RunID: "r2", Tools: json.RawMessage(`[{"name":"search"}]`)})
	body, _ := in.MarshalJSON()
	fmt.Println(string(body))
	// Output:
	// {"threadId":"t1","runId":"r2","protocolVersion":"1.0","tools":[{"name":"search"}],"context":[],"forwardedProps":{},"state":{"step":1},"messages":[{"id":"a1","role":"assistant","content":"Which city?"},{"id":"u2","role":"user","content":"Rome"}]}
}

// Checkpoint and Restore carry a thread across a restart: the restored
// Consumer goes on exactly where the first one stopped.
func ExampleRestore() {
	c := aguistate.New(nil)
	_ = c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"n":12345678901234567890}}`))
	_ = c.Apply([]byte(`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hel"}`))
	saved := c.Checkpoint() // store it anywhere; it is JSON

	r, err := aguistate.Restore(saved, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = r.Apply([]byte(`{"type":"TEXT_MESSAGE_CHUNK","delta":"lo"}`)) // the open chunk stream goes on
	b, _ := r.Messages()[0].MarshalJSON()
	fmt.Println(r.State(), string(b))
	// Output: {"n":12345678901234567890} {"id":"m1","role":"assistant","content":"Hello"}
}

// Clone tries changes on a copy of a thread, at no cost whatever the
// thread holds: here a message past MaxMessages, and text that streams
// into the open message apart from the original's.
func ExampleConsumer_Clone() {
	c := aguistate.New(&aguistate.Options{MaxMessages: 2})
	_ = c.AddMessages(aguistate.UserMessage("Hi"))
	_ = c.Apply([]byte(`{"type":"TEXT_MESSAGE_CHUNK","messageId":"a1","delta":"Hel"}`))

	try := c.Clone()
	fmt.Println(try.AddMessages(aguistate.UserMessage("And?")))
	_ = try.Apply([]byte(`{"type":"TEXT_MESSAGE_CHUNK","delta":"p!"}`))
	_ = c.Apply([]byte(`{"type":"TEXT_MESSAGE_CHUNK","delta":"lo"}`))
	fmt.Println(c.Messages()[1].Text(), try.Messages()[1].Text())
	// Output:
	// aguistate: limit exceeded: 3 messages, more than MaxMessages (2)
	// Hello Help!
}

// Equal compares JSON values as RFC 6902 does: numbers by value, objects
// whatever their member order. String compares text.
func ExampleValue_Equal() {
	var a, b aguistate.Value
	_ = json.Unmarshal([]byte(`{"total":12.50,"items":["tea"]}`), &a)
	_ = json.Unmarshal([]byte(`{"items":["tea"],"total":1.25e1}`), &b)
	fmt.Println(a.Equal(b), a.String() == b.String())
	// Output: true false
}

// A viewer who joins mid-message gets the thread as a prelude, then the
// events that follow, and ends where the thread ends.
func ExampleConsumer_Prelude() {
	thread := aguistate.New(nil)
	for _, ev := range []string{
		`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`,
	} {
		_ = thread.Apply([]byte(ev))
	}
	viewer := aguistate.New(nil)
	for _, ev := range thread.Prelude() {
		fmt.Println(string(ev))
		_ = viewer.Apply(ev)
	}
	for _, ev := range []string{
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
	} {
		_ = thread.Apply([]byte(ev))
		_ = viewer.Apply([]byte(ev))
	}
	fmt.Println(viewer.Messages()[0].Text(), thread.Messages()[0].Text())
	// Output:
	// {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
	// {"type":"STATE_SNAPSHOT","snapshot":{}}
	// {"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m1","role":"assistant","content":""}]}
	// {"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}
	// {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}
	// Hello Hello
}
