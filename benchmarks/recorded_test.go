// Consumer.Run against a naive map-based consumer on every recorded
// stream: short streams, where setting up a thread costs as much as its
// events.

package benchmarks

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aguistate/aguistate"
	jsonpatch "github.com/evanphx/json-patch/v5"
	sse "github.com/tmaxmax/go-sse"
)

// recorded is one recorded stream with the run input that produced it,
// when there is one.
type recorded struct {
	name         string
	stream       []byte
	input        []byte // nil for none
	jsonl        bool
	aguistateErr bool // the stream ends in an error (a malformed stream, kept to test that)
}

// recordedStreams returns the recorded streams of ../../shared/streams
// (real producers' output; present in the team's worktrees) and of
// ../testdata/streams.
func recordedStreams(tb testing.TB) []recorded {
	var out []recorded
	for _, dir := range []string{filepath.Join("..", "..", "shared", "streams"), filepath.Join("..", "testdata", "streams")} {
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			tb.Fatal(err)
		}
		for _, file := range files {
			ext := filepath.Ext(file)
			if ext != ".sse" && ext != ".jsonl" {
				continue
			}
			r := recorded{name: strings.TrimSuffix(filepath.Base(file), ext), jsonl: ext == ".jsonl"}
			if r.stream, err = os.ReadFile(file); err != nil {
				tb.Fatal(err)
			}
			r.input, err = os.ReadFile(strings.TrimSuffix(file, ext) + ".input.json")
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				tb.Fatal(err)
			}
			r.aguistateErr = runAguistate(r) != nil
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		tb.Skip("no recorded streams")
	}
	return out
}

// runAguistate is what a Go client writes with aguistate: a Consumer, the
// run's input, and the stream.
func runAguistate(r recorded) error {
	c := aguistate.New(nil)
	if r.input != nil {
		var in aguistate.RunAgentInput
		if err := in.UnmarshalJSON(r.input); err != nil {
			return err
		}
		if err := c.StartRun(in); err != nil {
			return err
		}
	}
	return c.Run(context.Background(), bytes.NewReader(r.stream))
}

// mapConsumer is what a Go client writes without a library and without
// types: the state and each message as encoding/json's maps, events
// decoded into a map, STATE_DELTA through evanphx/json-patch on the
// state's text, and text and arguments appended to strings.
type mapConsumer struct {
	state    any
	messages []map[string]any
	byID     map[string]map[string]any
	calls    map[string]map[string]any // tool calls by id
}

func (m *mapConsumer) start(input []byte) error {
	m.byID, m.calls = map[string]map[string]any{}, map[string]map[string]any{}
	m.state = map[string]any{}
	if input == nil {
		return nil
	}
	var in struct {
		State    any              `json:"state"`
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return err
	}
	if in.State != nil {
		m.state = in.State
	}
	m.setMessages(in.Messages)
	return nil
}

func (m *mapConsumer) setMessages(ms []map[string]any) {
	m.messages = ms
	clear(m.byID)
	for _, msg := range ms {
		if id, ok := msg["id"].(string); ok {
			m.byID[id] = msg
		}
	}
}

func (m *mapConsumer) run(r recorded) error {
	if err := m.start(r.input); err != nil {
		return err
	}
	if r.jsonl {
		s := bufio.NewScanner(bytes.NewReader(r.stream))
		s.Buffer(nil, 16<<20)
		for s.Scan() {
			if len(bytes.TrimSpace(s.Bytes())) == 0 {
				continue
			}
			if err := m.apply(s.Bytes()); err != nil {
				return err
			}
		}
		return s.Err()
	}
	for ev, err := range sse.Read(bytes.NewReader(r.stream), &sse.ReadConfig{MaxEventSize: 16 << 20}) {
		if err != nil {
			return err
		}
		if err := m.apply([]byte(ev.Data)); err != nil {
			return err
		}
	}
	return nil
}

func (m *mapConsumer) apply(data []byte) error {
	var e map[string]any
	if err := json.Unmarshal(data, &e); err != nil {
		return err
	}
	str := func(name string) string { s, _ := e[name].(string); return s }
	switch str("type") {
	case "STATE_SNAPSHOT":
		m.state = e["snapshot"]
	case "STATE_DELTA":
		ops, err := json.Marshal(e["delta"])
		if err != nil {
			return err
		}
		doc, err := json.Marshal(m.state)
		if err != nil {
			return err
		}
		patch, err := jsonpatch.DecodePatch(ops)
		if err != nil {
			return nil // skipped, as the spec says
		}
		if doc, err = patch.Apply(doc); err != nil {
			return nil
		}
		return json.Unmarshal(doc, &m.state)
	case "MESSAGES_SNAPSHOT":
		list, _ := e["messages"].([]any)
		ms := make([]map[string]any, 0, len(list))
		for _, v := range list {
			if msg, ok := v.(map[string]any); ok {
				ms = append(ms, msg)
			}
		}
		m.setMessages(ms)
	case "TEXT_MESSAGE_START":
		m.add(map[string]any{"id": str("messageId"), "role": "assistant", "content": ""})
	case "TEXT_MESSAGE_CONTENT":
		if msg := m.byID[str("messageId")]; msg != nil {
			s, _ := msg["content"].(string)
			msg["content"] = s + str("delta")
		}
	case "TOOL_CALL_START":
		parent := m.byID[str("parentMessageId")]
		if parent == nil {
			parent = map[string]any{"id": str("parentMessageId"), "role": "assistant"}
			if parent["id"] == "" {
				parent["id"] = str("toolCallId")
			}
			m.add(parent)
		}
		call := map[string]any{"id": str("toolCallId"), "type": "function",
			"function": map[string]any{"name": str("toolCallName"), "arguments": ""}}
		calls, _ := parent["toolCalls"].([]any)
		parent["toolCalls"] = append(calls, call)
		m.calls[str("toolCallId")] = call
	case "TOOL_CALL_ARGS":
		if call := m.calls[str("toolCallId")]; call != nil {
			fn := call["function"].(map[string]any)
			fn["arguments"] = fn["arguments"].(string) + str("delta")
		}
	case "TOOL_CALL_RESULT":
		m.add(map[string]any{"id": str("messageId"), "role": "tool", "toolCallId": str("toolCallId"), "content": str("content")})
	}
	return nil
}

func (m *mapConsumer) add(msg map[string]any) {
	m.messages = append(m.messages, msg)
	if id, ok := msg["id"].(string); ok {
		m.byID[id] = msg
	}
}

// BenchmarkRecorded applies each recorded stream, from its run input when
// it has one, with aguistate (New, the input's decoding, StartRun, Run) and
// with the naive map-based consumer, side by side. The target: aguistate
// ahead on every stream.
func BenchmarkRecorded(b *testing.B) {
	for _, r := range recordedStreams(b) {
		b.Run("stream="+r.name, func(b *testing.B) {
			b.Run("consumer=aguistate", func(b *testing.B) {
				b.SetBytes(int64(len(r.stream)))
				b.ReportAllocs()
				reportCPU(b, func() {
					if err := runAguistate(r); (err != nil) != r.aguistateErr {
						b.Fatal(err)
					}
				})
			})
			b.Run("consumer=maps", func(b *testing.B) {
				b.SetBytes(int64(len(r.stream)))
				b.ReportAllocs()
				reportCPU(b, func() {
					var m mapConsumer
					if err := m.run(r); err != nil {
						b.Fatal(fmt.Errorf("%s: %w", r.name, err))
					}
				})
			})
		})
	}
}
