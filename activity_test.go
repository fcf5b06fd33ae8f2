package aguistate

import "testing"

// TestActivityReference runs the reference-client cases for activity
// messages.
func TestActivityReference(t *testing.T) {
	runEventCases(t, []eventCase{
		{
			name:     "27-activity-snapshot",
			reason:   "reference case 27: same output",
			messages: `[{"id":"u1","role":"user","content":"hi"},{"id":"act1","role":"activity","activityType":"plan","content":{"s":1},"metadata":{"keep":1},"subagentRunId":"old"},{"id":"act2","role":"activity","activityType":"plan","content":{"s":2}}]`,
			events: []string{
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"act1","activityType":"plan2","content":{"s":10}}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"act2","activityType":"plan","content":{"s":20},"replace":false}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"act3","activityType":"new","content":{"n":1},"replace":false,"subagentRunId":"sub1","timestamp":9}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"u1","activityType":"hijack","content":{"h":1},"replace":false}`,
			},
			want: `[{"id":"u1","role":"user","content":"hi"},{"id":"act1","role":"activity","activityType":"plan2","content":{"s":10},"metadata":{"keep":1}},{"id":"act2","role":"activity","activityType":"plan","content":{"s":2}},{"id":"act3","role":"activity","activityType":"new","content":{"n":1},"subagentRunId":"sub1"}]`,
		},
		{
			name:     "28-activity-snapshot-over-non-activity",
			reason:   "reference case 28: same output",
			messages: `[{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"u1","activityType":"hijack","content":{"h":1}}`,
			},
			want: `[{"id":"u1","role":"activity","activityType":"hijack","content":{"h":1}}]`,
		},
		{
			name:     "29-activity-delta",
			reason:   "reference case 29: same messages; the reference ignores an ACTIVITY_DELTA for an unknown id silently, we warn ErrNoTarget (decision 3)",
			messages: `[{"id":"act1","role":"activity","activityType":"plan","content":{"steps":["a"]}},{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"ACTIVITY_DELTA","messageId":"act1","activityType":"plan-v2","patch":[{"op":"add","path":"/steps/-","value":"b"}]}`,
				`{"type":"ACTIVITY_DELTA","messageId":"act1","activityType":"plan-v3","patch":[{"op":"replace","path":"/nope/x","value":1}]}`,
				`{"type":"ACTIVITY_DELTA","messageId":"missing","activityType":"p","patch":[]}`,
				`{"type":"ACTIVITY_DELTA","messageId":"u1","activityType":"p","patch":[]}`,
			},
			want: `[{"id":"act1","role":"activity","activityType":"plan-v2","content":{"steps":["a","b"]}},{"id":"u1","role":"user","content":"hi"}]`,
			warn: []error{ErrPatchFailed, ErrNoTarget, ErrNoTarget},
		},
		{
			name:     "58-activity-delta-multi-op-atomic",
			reason:   "reference case 58: same output",
			messages: `[{"id":"act1","role":"activity","activityType":"plan","content":{"a":1}}]`,
			events: []string{
				`{"type":"ACTIVITY_DELTA","messageId":"act1","activityType":"plan","patch":[{"op":"replace","path":"/a","value":2},{"op":"remove","path":"/zz"}]}`,
			},
			want: `[{"id":"act1","role":"activity","activityType":"plan","content":{"a":1}}]`,
			warn: []error{ErrPatchFailed},
		},
		{
			name:     "60-activity-snapshot-metadata-subagent",
			reason:   "reference case 60: same output",
			messages: `[{"id":"a","role":"activity","activityType":"p","content":{"v":1},"metadata":{"x":1}},{"id":"b","role":"activity","activityType":"p","content":{"v":1}},{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p","content":{"v":2},"replace":false,"metadata":{"y":2}}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"b","activityType":"q","content":{"v":3},"subagentRunId":"s1","metadata":{"z":3}}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"u1","activityType":"q","content":{},"replace":false,"metadata":{"w":1}}`,
			},
			want: `[{"id":"a","role":"activity","activityType":"p","content":{"v":1},"metadata":{"x":1,"y":2}},{"id":"b","role":"activity","activityType":"q","content":{"v":3},"subagentRunId":"s1","metadata":{"z":3}},{"id":"u1","role":"user","content":"hi"}]`,
		},
	})
}
