// Tests of the text and reasoning events.

package aguistate

import "testing"

// TestTextReference runs the reference-client cases (notes/ts-client.md,
// verified with the oracle) for text and reasoning messages.
func TestTextReference(t *testing.T) {
	runEventCases(t, []eventCase{
		{
			name:   "06-text-basic",
			reason: "reference case 06: same output",
			events: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"m1","timestamp":5,"rawEvent":{"p":1}}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
			},
			want: `[{"id":"m1","role":"assistant","content":"Hello"}]`,
		},
		{
			name:   "07-text-role-name-subagent-metadata",
			reason: "reference case 07: same output",
			events: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"user","name":"bob","subagentRunId":"sub1","metadata":{"a":1}}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x","metadata":{"b":2}}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"m1","metadata":{"a":9}}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"m2","subagentRunId":null}`,
			},
			want: `[{"id":"m1","role":"user","content":"x","name":"bob","subagentRunId":"sub1","metadata":{"a":9,"b":2}},{"id":"m2","role":"assistant","content":""}]`,
		},
		{
			name:     "08-text-start-reuses-user-id",
			reason:   "reference case 08 appends the assistant's text to the user's words (\"hi+more\"); the write rule keeps the user message, and the construct rule skips the content and end of a start that was skipped",
			messages: `[{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"u1","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"u1","delta":"+more"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"u1"}`,
			},
			want: `[{"id":"u1","role":"user","content":"hi"}]`,
			warn: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget},
			warnText: []string{`message "u1" has the role "user", and the event starts one of the role "assistant"`,
				`text message "u1" is not open`, `text message "u1" is not open`},
		},
		{
			name:     "09-text-content-unknown-id",
			reason:   "reference case 09: same output",
			messages: `[{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"nope","delta":"x"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"nope"}`,
			},
			want: `[{"id":"u1","role":"user","content":"hi"}]`,
			warn: []error{ErrNoTarget, ErrNoTarget},
		},
		{
			name:     "10-text-on-activity-id",
			reason:   "reference case 10: same output",
			messages: `[{"id":"act","role":"activity","activityType":"plan","content":{"s":1}}]`,
			events: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"act"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"act","delta":"x"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"act"}`,
				`{"type":"REASONING_MESSAGE_START","messageId":"act","role":"reasoning"}`,
				`{"type":"REASONING_MESSAGE_CONTENT","messageId":"act","delta":"y"}`,
				`{"type":"REASONING_MESSAGE_END","messageId":"act"}`,
			},
			want: `[{"id":"act","role":"activity","activityType":"plan","content":{"s":1}}]`,
			warn: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget, ErrNoTarget, ErrNoTarget, ErrNoTarget},
		},
		{
			name:     "11-text-content-on-user-parts-content",
			reason:   "reference case 11 replaces the content parts by the text; no text message is open, so the content is skipped and the parts kept",
			messages: `[{"id":"u1","role":"user","content":[{"type":"text","text":"a"}]}]`,
			events: []string{
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"u1","delta":"b"}`,
			},
			want:     `[{"id":"u1","role":"user","content":[{"type":"text","text":"a"}]}]`,
			warn:     []error{ErrNoTarget},
			warnText: []string{`text message "u1" is not open: its start was skipped, or it has ended`},
		},
		{
			name:   "12-text-start-on-toolcall-assistant",
			reason: "reference case 12: same output; the assistant message the tool call made has no text yet, so the start opens it (construct rule)",
			events: []string{
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"a1","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"hi"}`,
			},
			want: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}],"content":"hi"}]`,
		},
		{
			name:   "30-reasoning-basic",
			reason: "reference case 30: same output",
			events: []string{
				`{"type":"REASONING_START","messageId":"r0"}`,
				`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning","subagentRunId":"sub1"}`,
				`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"think"}`,
				`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"ing"}`,
				`{"type":"REASONING_MESSAGE_END","messageId":"r1"}`,
				`{"type":"REASONING_END","messageId":"r0"}`,
				`{"type":"REASONING_MESSAGE_CONTENT","messageId":"nope","delta":"x"}`,
			},
			want: `[{"id":"r1","role":"reasoning","content":"thinking","subagentRunId":"sub1"}]`,
			warn: []error{ErrNoTarget},
		},
		{
			name:     "31-reasoning-encrypted",
			reason:   "reference case 31: same messages; the reference ignores encrypted values with no target silently, we warn ErrNoTarget (its doc: an event naming a message or tool call that does not exist or cannot take it)",
			messages: `[{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"act","role":"activity","activityType":"p","content":{}}]`,
			events: []string{
				`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"u1","encryptedValue":"E1"}`,
				`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"tool-call","entityId":"c1","encryptedValue":"E2"}`,
				`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"a1","encryptedValue":"E3"}`,
				`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"act","encryptedValue":"E4"}`,
				`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"c1","encryptedValue":"E5"}`,
				`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"tool-call","entityId":"u1","encryptedValue":"E6"}`,
				`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"u1","encryptedValue":"E7"}`,
			},
			want: `[{"id":"u1","role":"user","content":"hi","encryptedValue":"E7"},{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"encryptedValue":"E2"}],"encryptedValue":"E3"},{"id":"act","role":"activity","activityType":"p","content":{}}]`,
			warn: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget},
		},
		{
			name:   "42-messages-snapshot-then-content",
			reason: "reference case 42 appends (its pipeline's verifyEvents throws: no active message); a1 is not open, so the content is skipped",
			events: []string{
				`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a1","role":"assistant","content":"x"}]}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"y"}`,
			},
			want: `[{"id":"a1","role":"assistant","content":"x"}]`,
			warn: []error{ErrNoTarget},
		},
		{
			name:   "44-unknown-event-pipeline",
			reason: "reference case 44 (pipeline): same messages, but it warns about the unknown event and the unknown member; we pass both silently (decision 9)",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"WHATEVER","foo":1}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"m1","bogus":1}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
			},
			want: `[{"id":"m1","role":"assistant","content":""}]`,
		},
		{
			name:   "45-pipeline-first-not-run-started",
			reason: "reference case 45 (pipeline) errors \"First event must be 'RUN_STARTED'\"; we do not verify event order (the reference's default mode does not either)",
			events: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
			},
			want: `[{"id":"m1","role":"assistant","content":""}]`,
		},
		{
			name:   "46-pipeline-content-unknown-id",
			reason: "reference case 46 (pipeline) errors in verifyEvents; its default mode warns and skips, as we do (decision 3)",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"nope","delta":"x"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
			},
			want: `[]`,
			warn: []error{ErrNoTarget},
		},
		{
			name:     "52-text-start-existing-with-metadata",
			reason:   "reference case 52 merges the metadata into the held assistant message; a start of the role user that names it is skipped whole (write rule), and so is a replayed start",
			messages: `[{"id":"a1","role":"assistant","content":"x","metadata":{"old":1}}]`,
			events: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"a1","role":"user","name":"ignored","metadata":{"n":2}}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"a1","metadata":{"n":2}}`,
			},
			want:     `[{"id":"a1","role":"assistant","content":"x","metadata":{"old":1}}]`,
			warn:     []error{ErrNoTarget, ErrNoTarget},
			warnText: []string{`the event starts one of the role "user"`, `text message "a1" is held already: a start that names it is a replay`},
		},
		{
			name:     "56-reasoning-start-reuses-assistant-id",
			reason:   "reference case 56 appends reasoning to the assistant's answer (\"ans+r\", \"into-text\"); reasoning events write only reasoning messages (write rule)",
			messages: `[{"id":"a1","role":"assistant","content":"ans"}]`,
			events: []string{
				`{"type":"REASONING_MESSAGE_START","messageId":"a1","role":"reasoning"}`,
				`{"type":"REASONING_MESSAGE_CONTENT","messageId":"a1","delta":"+r"}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"r9"}`,
				`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r9","delta":"into-text"}`,
			},
			want: `[{"id":"a1","role":"assistant","content":"ans"},{"id":"r9","role":"assistant","content":""}]`,
			warn: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget},
			warnText: []string{`message "a1" has the role "assistant", and reasoning message events write only into "reasoning" messages`,
				`message "a1" has the role "assistant"`, `message "r9" has the role "assistant"`},
		},
		{
			name:     "63-tool-content-append-on-tool-msg",
			reason:   "reference case 63 appends text to the tool result (\"r+x\"); text events do not write tool messages (write rule)",
			messages: `[{"id":"t1","role":"tool","toolCallId":"c1","content":"r"}]`,
			events: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"t1"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"t1","delta":"+x"}`,
			},
			want: `[{"id":"t1","role":"tool","toolCallId":"c1","content":"r"}]`,
			warn: []error{ErrNoTarget, ErrNoTarget},
			warnText: []string{`message "t1" has the role "tool", and text message events write only into "assistant", "user", "system" or "developer" messages`,
				`message "t1" has the role "tool"`},
		},
	})
}

// TestTextEvents checks every field of the text and reasoning events.
func TestTextEvents(t *testing.T) {
	runEventCases(t, []eventCase{
		{
			name:   "start with every field",
			reason: "key order id, role, content, name, subagentRunId, metadata; timestamp and rawEvent are not copied",
			events: []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"user","name":"n","subagentRunId":"s","metadata":{"a":1.50},"timestamp":1,"rawEvent":{"x":1}}`},
			want:   `[{"id":"m1","role":"user","content":"","name":"n","subagentRunId":"s","metadata":{"a":1.50}}]`,
		},
		{
			name:   "start with null optional fields",
			reason: "an optional field may be null: role defaults to assistant, no name, no subagentRunId, no metadata",
			events: []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":null,"name":null,"subagentRunId":null,"metadata":null}`},
			want:   `[{"id":"m1","role":"assistant","content":""}]`,
		},
		{
			name:   "reasoning start",
			reason: "a reasoning message has role reasoning and no name",
			events: []string{`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning","subagentRunId":"s","metadata":{"k":true}}`},
			want:   `[{"id":"r1","role":"reasoning","content":"","subagentRunId":"s","metadata":{"k":true}}]`,
		},
		{
			name:     "content appended at the end when missing",
			reason:   "decision 7: a missing content member is appended (the start opens the held assistant message, which has no text yet)",
			messages: `[{"id":"a","role":"assistant","toolCalls":[]}]`,
			events:   []string{`{"type":"TEXT_MESSAGE_START","messageId":"a"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"a","delta":"x\u00e9"}`},
			want:     `[{"id":"a","role":"assistant","toolCalls":[],"content":"xé"}]`,
		},
		{
			name:     "metadata merged in place",
			reason:   "existing metadata members keep their place and take the event's value; new ones go last",
			messages: `[{"id":"a","role":"assistant","metadata":{"x":1,"y":2},"content":""}]`,
			events: []string{`{"type":"TEXT_MESSAGE_START","messageId":"a"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"a","delta":"c"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"a","metadata":{"z":3,"x":9}}`},
			want: `[{"id":"a","role":"assistant","metadata":{"x":9,"y":2,"z":3},"content":"c"}]`,
		},
		{
			name:     "metadata that is not an object is replaced",
			reason:   "only an object can be merged into",
			messages: `[{"id":"a","role":"reasoning","content":"","metadata":"old"}]`,
			events: []string{`{"type":"REASONING_MESSAGE_START","messageId":"a","role":"reasoning"}`,
				`{"type":"REASONING_MESSAGE_END","messageId":"a","metadata":{"k":1}}`},
			want: `[{"id":"a","role":"reasoning","content":"","metadata":{"k":1}}]`,
		},
		{
			name:     "reasoning start and end markers change nothing",
			reason:   "REASONING_START and REASONING_END build no message",
			messages: `[{"id":"u","role":"user","content":"hi"}]`,
			events:   []string{`{"type":"REASONING_START","messageId":"r0"}`, `{"type":"REASONING_END","messageId":"r0","metadata":{"k":1}}`},
			want:     `[{"id":"u","role":"user","content":"hi"}]`,
		},
		{
			name:     "encrypted value replaced in place",
			reason:   "a second value for one entity replaces the first where it is",
			messages: `[{"id":"u","role":"user","encryptedValue":"old","content":"hi"}]`,
			events:   []string{`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"u","encryptedValue":"new"}`},
			want:     `[{"id":"u","role":"user","encryptedValue":"new","content":"hi"}]`,
		},
		{
			name:     "unknown id",
			reason:   "decision 3: skipped with a warning",
			messages: `[{"id":"u","role":"user","content":"hi"}]`,
			events:   []string{`{"type":"REASONING_MESSAGE_END","messageId":"nope"}`},
			want:     `[{"id":"u","role":"user","content":"hi"}]`,
			warn:     []error{ErrNoTarget},
		},
	})
}

// TestTextMalformed checks that a text or reasoning event with a required
// field missing or of the wrong type is fatal and changes nothing.
func TestTextMalformed(t *testing.T) {
	held := `[{"id":"m1","role":"assistant","content":"a"}]`
	var cases []eventCase
	for _, ev := range []string{
		`{"type":"TEXT_MESSAGE_START"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":1}`,
		`{"type":"TEXT_MESSAGE_START","messageId":""}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m2","role":1}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m2","role":"tool"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m2","role":"reasoning"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m2","role":"activity"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","role":"activity","delta":"x"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m2","name":false}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m2","subagentRunId":7}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m2","metadata":[1]}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":null}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":5}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x","metadata":"m"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":null}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m1","subagentRunId":{}}`,
		`{"type":"REASONING_MESSAGE_START","messageId":"r1"}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"m1","delta":[]}`,
		`{"type":"REASONING_MESSAGE_END"}`,
		`{"type":"REASONING_START"}`,
		`{"type":"REASONING_END","messageId":3}`,
		`{"type":"REASONING_ENCRYPTED_VALUE","entityId":"m1","encryptedValue":"e"}`,
		`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","encryptedValue":"e"}`,
		`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"m1","encryptedValue":1}`,
	} {
		cases = append(cases, eventCase{name: ev, reason: "a required field is missing or of the wrong type",
			messages: held, events: []string{ev}, want: held, fatal: ErrMalformedEvent})
	}
	runEventCases(t, cases)
}
