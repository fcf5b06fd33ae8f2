// Tests of the replay command.

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	t.Parallel()
	const bundled = "../../testdata/streams/"
	tests := []struct {
		name   string
		args   []string
		stdin  string
		status int
		stdout []string // substrings of standard output
		stderr []string // substrings of standard error
		reason string
	}{
		{name: "bundled stream", args: []string{"-input", bundled + "trip-planner.input.json", bundled + "trip-planner.sse"},
			status: 0, stdout: []string{`"budgetEur": 1200.50`, `"confirmed": true`, `"id": "a-2"`},
			stderr: []string{`warning: aguistate: event 7 (STATE_DELTA): operation 1 (replace "/itinerary/5/plan"): patch failed to apply`},
			reason: "the README's first set-up command"},
		{name: "standard input", stdin: `{"type":"STATE_SNAPSHOT","snapshot":[1.0,"<&>"]}`,
			status: 0, stdout: []string{`"state": [`, `1.0,`, `"<&>"`, `"messages": []`}, reason: "no HTML escaping, exact numbers"},
		{name: "fatal event", args: []string{bundled + "malformed-patch.jsonl"},
			status: 1, stdout: []string{`"count": 2`}, stderr: []string{`error: aguistate: event 3 (STATE_DELTA): operation 0 (increment "/count"): malformed patch`},
			reason: "the output holds the value from before the fatal event"},
		{name: "next input", args: []string{"-next-input", "-input", bundled + "trip-planner.input.json", bundled + "trip-planner.sse"},
			status: 0, stdout: []string{`"threadId": "thread-trip"`, `"tools": []`, `"forwardedProps": {}`, `"confirmed": true`}, reason: "-next-input prints the next run's input"},
		{name: "pending interrupt", stdin: `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"confirm"}]}}`,
			status: 0, stderr: []string{`interrupt: {"id":"i1","reason":"confirm"}`}, reason: "pending interrupts are shown"},
		{name: "no event", args: []string{"testdata/not-a-stream.md"}, status: 1, stdout: []string{`"state": {}`},
			stderr: []string{"error: the stream holds no event"}, reason: "a file that is no stream must not look like an empty success"},
		{name: "help", args: []string{"-h"}, status: 0, stderr: []string{"usage:"}, reason: "asking for help is not an error"},
		{name: "too many arguments", args: []string{"a", "b"}, status: 2, stderr: []string{"usage:"}, reason: "bad usage"},
		{name: "unknown flag", args: []string{"-nope"}, status: 2, reason: "bad usage"},
		{name: "missing stream", args: []string{"does-not-exist.sse"}, status: 2, stderr: []string{"error:"}, reason: "unreadable file"},
		{name: "missing input", args: []string{"-input", "nope.json"}, status: 2, stderr: []string{"error:"}, reason: "unreadable file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			status := run(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			assert.Equal(t, tt.status, status, "%s\nstderr: %s", tt.reason, stderr.String())
			for _, s := range tt.stdout {
				assert.Contains(t, stdout.String(), s, tt.reason)
			}
			for _, s := range tt.stderr {
				assert.Contains(t, stderr.String(), s, tt.reason)
			}
			if stdout.Len() > 0 {
				require.True(t, json.Valid(stdout.Bytes()), "standard output is one JSON value")
			}
		})
	}
}

// TestNextInputRunID checks that -next-input makes a new run id and drops
// activity messages.
func TestNextInputRunID(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	stream := `{"type":"RUN_STARTED","threadId":"t9","runId":"r1"}
{"type":"ACTIVITY_SNAPSHOT","messageId":"x","activityType":"PLAN","content":{}}
{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`
	require.Equal(t, 0, run([]string{"-next-input"}, strings.NewReader(stream), &stdout, &stderr), stderr.String())
	var in struct {
		ThreadID string            `json:"threadId"`
		RunID    string            `json:"runId"`
		Messages []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &in))
	assert.Equal(t, "t9", in.ThreadID)
	assert.Len(t, in.RunID, 36, "a UUID")
	assert.NotEqual(t, "r1", in.RunID)
	assert.Len(t, in.Messages, 1, "the activity message stays behind")
}
