package aguistate

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds are event streams, one event per line, taken from the
// reference-client cases and the chunk tests.
var fuzzSeeds = []string{
	`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"r","state":{"b":2},"messages":[{"id":"u1","role":"user","content":"CHANGED"},{"id":"u2","role":"user","content":"new","subagentRunId":null}]}}
{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"tool_call","subagentRunId":null}]}}
{"type":"RUN_ERROR","message":"boom","code":"E"}`,
	`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"user","name":"bob","subagentRunId":"sub1","metadata":{"a":1}}
{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x","metadata":{"b":2}}
{"type":"TEXT_MESSAGE_END","messageId":"m1","metadata":{"a":9}}
{"type":"REASONING_MESSAGE_START","messageId":"u1","role":"reasoning"}
{"type":"REASONING_MESSAGE_CONTENT","messageId":"act","delta":"y"}
{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"u1","encryptedValue":"E1"}`,
	`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1","metadata":{"m":1}}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"x\":"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"r1"}
{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"g","parentMessageId":"u1"}
{"type":"REASONING_ENCRYPTED_VALUE","subtype":"tool-call","entityId":"c1","encryptedValue":"E2"}`,
	`{"type":"ACTIVITY_SNAPSHOT","messageId":"act1","activityType":"plan","content":{"steps":["a"]}}
{"type":"ACTIVITY_DELTA","messageId":"act1","activityType":"plan-v2","patch":[{"op":"add","path":"/steps/-","value":"b"}]}
{"type":"ACTIVITY_DELTA","messageId":"act1","activityType":"plan-v3","patch":[{"op":"replace","path":"/nope/x","value":1}]}
{"type":"ACTIVITY_SNAPSHOT","messageId":"u1","activityType":"hijack","content":{"h":1},"replace":false}`,
	`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}
{"type":"TEXT_MESSAGE_CHUNK","delta":"b"}
{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","parentMessageId":"m1","delta":"{}"}
{"type":"REASONING_MESSAGE_CHUNK","messageId":"r1","subagentRunId":"s1","delta":"a"}
{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"user","delta":"c"}
{"type":"SUBAGENT_FINISHED","subagentRunId":"s1"}
{"type":"TEXT_MESSAGE_CHUNK","subagentRunId":"s1","delta":"d"}`,
	`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a/-","value":3}]}
{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a1","role":"assistant","content":"x"}]}
{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"y"}
{"type":"STATE_SNAPSHOT","snapshot":null}`,
}

// FuzzApplyEvents feeds event streams (one event per line) to a Consumer:
// nothing panics, every error is an *EventError of a fatal class, and a
// fatal event leaves the Consumer exactly as it was.
func FuzzApplyEvents(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	// And every bundled stream, one event per line.
	files, _ := filepath.Glob(filepath.Join("testdata", "streams", "*"))
	for _, file := range files {
		if ext := filepath.Ext(file); ext == ".sse" || ext == ".jsonl" || strings.HasSuffix(file, ".events.json") {
			f.Add(bytes.Join(streamEvents(f, file), []byte("\n")))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := New(&Options{MaxDepth: 64})
		if err := c.StartRun([]byte(`{"state":{"a":[1,2]},"messages":[{"id":"u1","role":"user","content":"hi"},{"id":"act","role":"activity","activityType":"p","content":{}}]}`)); err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			before := snapshot(c)
			err := c.Apply(line)
			if err == nil {
				continue
			}
			var ee *EventError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v is not an *EventError", err)
			}
			if !errors.Is(err, ErrMalformedEvent) && !errors.Is(err, ErrMalformedPatch) &&
				!errors.Is(err, ErrMalformedMessages) && !errors.Is(err, ErrLimit) {
				t.Fatalf("error %v is not of a fatal class", err)
			}
			if !strings.HasPrefix(err.Error(), "aguistate: ") {
				t.Fatalf("error text %q", err)
			}
			if after := snapshot(c); after != before {
				t.Fatalf("a fatal event changed the Consumer:\nbefore %s\nafter  %s", before, after)
			}
		}
		out, err := json.Marshal(c.NextInput(RunAgentInput{}))
		if err != nil || !json.Valid(out) {
			t.Fatalf("next input %s: %v", out, err)
		}
	})
}
