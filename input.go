// RunAgentInput: the body of a run request, built from a Consumer and read
// by one rule.

package aguistate

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// RunAgentInput is the body of an AG-UI run request: what a client POSTs to
// start the next run of a thread. [Consumer.NextInput] fills it from the
// Consumer, so that the state goes back to the producer as the next run's
// starting value (spec, Cross-run behaviour).
//
// ProtocolVersion is the AG-UI version the client speaks, [ProtocolVersion]
// in every input this package builds; "" reads as a client from before
// the protocol carried a version. Tools, Context, ForwardedProps and
// Resume are JSON text, passed through; when set, they must be valid JSON.
// Resume answers the pending interrupts ([Consumer.Interrupts]) with AG-UI
// resume entries.
type RunAgentInput struct {
	ThreadID        string          `json:"threadId"`
	RunID           string          `json:"runId"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	ParentRunID     string          `json:"parentRunId,omitempty"`
	State           Value           `json:"state"`
	Messages        []Message       `json:"messages"`
	Tools           json.RawMessage `json:"tools"`          // nil → []
	Context         json.RawMessage `json:"context"`        // nil → []
	ForwardedProps  json.RawMessage `json:"forwardedProps"` // nil → {}
	Resume          json.RawMessage `json:"resume,omitempty"`
}

// ProtocolVersion is the version of AG-UI this package speaks: the
// protocolVersion of every run input it builds, and the version it judges
// a producer's RUN_STARTED by.
const ProtocolVersion = "1.0"

// NextInput returns the input of the thread's next run, as
// [Consumer.RunAgent] sends it. State and Messages are what the Consumer
// holds, but activity messages, which never travel to the producer (spec,
// MESSAGES_SNAPSHOT). ProtocolVersion is [ProtocolVersion]. ThreadID is the thread of the last run started, or,
// when there is none, opts' ThreadID or a new random UUID. The other fields
// come from opts (nil means the defaults); RunID is a new random UUID when
// opts gives none.
// The messages are immutable views in a new slice.
//
// The state goes out as held, even when [Consumer.Diverged] is true. Check
// it first, and ask the producer for a snapshot rather than send back a
// state known to be wrong.
func (c *Consumer) NextInput(opts *RunOptions) RunAgentInput {
	return c.cur.Load().nextInput(opts)
}

// nextInput is NextInput on view v.
func (v *view) nextInput(opts *RunOptions) RunAgentInput {
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	in := RunAgentInput{
		ThreadID: v.threadID, RunID: o.RunID, ProtocolVersion: ProtocolVersion, ParentRunID: o.ParentRunID,
		State: valueOf(v.state), Messages: make([]Message, 0, v.messages.Len()),
		Tools: o.Tools, Context: o.Context, ForwardedProps: o.ForwardedProps, Resume: o.Resume,
	}
	for m := range v.messages.All() {
		if m.role != roleActivity {
			in.Messages = append(in.Messages, m)
		}
	}
	if in.ThreadID == "" {
		in.ThreadID = o.ThreadID
	}
	if in.ThreadID == "" {
		in.ThreadID = newUUID()
	}
	if in.RunID == "" {
		in.RunID = newUUID()
	}
	return in
}

// MarshalJSON writes the input as one JSON object, with the members in the
// reference client's order. protocolVersion and parentRunId are left out
// when empty, state when
// State is the zero Value, and resume when not set. A nil Tools or Context
// is written as [], a nil ForwardedProps as {}. Messages are written
// verbatim. It fails when a RawMessage field is not valid JSON, and when a
// message cannot be sent (the zero Message, or one whose constructor
// failed), never writing null for it.
func (in RunAgentInput) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	member := func(name string) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(jsonv.AppendString(nil, name))
		b.WriteByte(':')
	}
	raw := func(name string, r json.RawMessage, def string) error {
		member(name)
		if r == nil {
			b.WriteString(def)
		} else if err := json.Compact(&b, r); err != nil {
			return apiError(fmt.Errorf("RunAgentInput.%s: %w", name, err))
		}
		return nil
	}
	member("threadId")
	b.Write(jsonv.AppendString(nil, in.ThreadID))
	member("runId")
	b.Write(jsonv.AppendString(nil, in.RunID))
	if in.ProtocolVersion != "" {
		member("protocolVersion")
		b.Write(jsonv.AppendString(nil, in.ProtocolVersion))
	}
	if in.ParentRunID != "" {
		member("parentRunId")
		b.Write(jsonv.AppendString(nil, in.ParentRunID))
	}
	if err := raw("tools", in.Tools, "[]"); err != nil {
		return nil, err
	}
	if err := raw("context", in.Context, "[]"); err != nil {
		return nil, err
	}
	if err := raw("forwardedProps", in.ForwardedProps, "{}"); err != nil {
		return nil, err
	}
	if in.State.n != nil { // a zero State is no state, as when the input had none
		member("state")
		b.Write(jsonv.Marshal(in.State.node()))
	}
	for i, m := range in.Messages {
		if err := m.check(); err != nil {
			return nil, apiError(fmt.Errorf("RunAgentInput.Messages[%d]: %w", i, err))
		}
	}
	member("messages")
	b.Write(jsonv.Marshal(encodeMessages(in.Messages)))
	if in.Resume != nil {
		if err := raw("resume", in.Resume, ""); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a RunAgentInput from its JSON object. [Consumer.StartRun]
// and RUN_STARTED's "input" follow the same rule:
//
//   - Every member is optional. null reads as absent, except for "state",
//     where null is the state null.
//   - threadId, runId, protocolVersion and parentRunId are strings. messages is an array of
//     message objects, each with a string role and, when present, a
//     non-empty string id. tools, context and resume are arrays. state and
//     forwardedProps may be any JSON value. Other members are ignored.
//   - Names match exactly: encoding/json alone would take "TOOLS" for
//     "tools".
//
// State and messages are kept verbatim. It returns an error wrapping
// [ErrMalformedEvent], or [ErrLimit] for a state or message nested deeper
// than 1000.
func (in *RunAgentInput) UnmarshalJSON(data []byte) error {
	out, err := parseRunInput(data, jsonv.DefaultMaxDepth+envelopeDepth)
	if err == nil {
		err = out.checkDepth(jsonv.DefaultMaxDepth)
	}
	if err != nil {
		return apiError(err)
	}
	*in = out
	return nil
}

// parseRunInput parses and reads a RunAgentInput's JSON text, nested at
// most maxDepth deep.
func parseRunInput(data []byte, maxDepth int) (RunAgentInput, error) {
	n, err := parseJSON(data, maxDepth)
	if err != nil {
		return RunAgentInput{}, fmt.Errorf("%w (in the run input)", err)
	}
	return readRunInput(n)
}

// readRunInput reads a RunAgentInput object as [RunAgentInput.UnmarshalJSON]
// says. Failures wrap ErrMalformedEvent.
func readRunInput(n *jsonv.Node) (RunAgentInput, error) {
	var in RunAgentInput
	if n.Kind() != jsonv.Object {
		return in, fmt.Errorf("%w: the run input is %s, not an object", ErrMalformedEvent, n.Kind().Phrase())
	}
	f := eventFields(n)
	in.ThreadID, _ = f.optStr("threadId")
	in.RunID, _ = f.optStr("runId")
	in.ProtocolVersion, _ = f.optStr("protocolVersion")
	in.ParentRunID, _ = f.optStr("parentRunId")
	if s := n.Get("state"); s != nil {
		in.State = valueOf(s)
	}
	messages := f.opt("messages", jsonv.Array)
	raw := func(v *jsonv.Node) json.RawMessage {
		if v == nil || v.Kind() == jsonv.Null {
			return nil
		}
		return jsonv.Marshal(v)
	}
	in.Tools, in.Context = raw(f.opt("tools", jsonv.Array)), raw(f.opt("context", jsonv.Array))
	in.ForwardedProps, in.Resume = raw(n.Get("forwardedProps")), raw(f.opt("resume", jsonv.Array))
	if f.err != nil {
		return RunAgentInput{}, fmt.Errorf("%w (in the run input)", f.err)
	}
	if messages != nil {
		var err error
		if in.Messages, err = decodeMessages(messages, true); err != nil {
			return RunAgentInput{}, fmt.Errorf("%w (in the run input)", err)
		}
	}
	return in, nil
}

// newUUID returns a random UUID, version 4 (RFC 9562 section 5.4).
func newUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // never fails (crypto/rand)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
