// Tests of the keyed sets: the events that open and close steps, reasoning
// spans, subagents and constructs cost O(log n) of those open, not n.

package aguistate

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openThread returns a Consumer restored, in O(n log n), from a checkpoint
// of a run with n open steps, n open reasoning spans, n subagents or n open
// tool calls (in 8 assistant messages): what holds, one of "steps",
// "spans", "subagents" and "open".
func openThread(t testing.TB, n int, holds string) *Consumer {
	var items []string
	calls := make([][]string, 8)
	for i := range n {
		switch holds {
		case "steps":
			items = append(items, fmt.Sprintf(`{"name":"s%d"}`, i))
		case "spans":
			items = append(items, fmt.Sprintf(`{"messageId":"r%d"}`, i))
		case "subagents":
			items = append(items, fmt.Sprintf(`{"event":{"type":"SUBAGENT_STARTED","subagentRunId":"a%d"},"done":false}`, i))
		case "open":
			items = append(items, fmt.Sprintf(`{"kind":"tool call","id":"c%d"}`, i))
			calls[i%8] = append(calls[i%8], fmt.Sprintf(`{"id":"c%d","type":"function","function":{"name":"f","arguments":""}}`, i))
		}
	}
	ms := make([]string, len(calls))
	for i, c := range calls {
		ms[i] = fmt.Sprintf(`{"id":"m%d","role":"assistant","toolCalls":[%s]}`, i, strings.Join(c, ","))
	}
	cp := `{"format":"aguistate-checkpoint/2","events":1,"threadId":"t","runId":"r","run":"started","diverged":false,"state":{},` +
		`"messages":[` + strings.Join(ms, ",") + `],"interrupts":[],"open":[],"chunks":[]}`
	cp = strings.Replace(cp, `"`+holds+`":[]`, "", 1)
	cp = cp[:len(cp)-1] + `,"` + holds + `":[` + strings.Join(items, ",") + `]}`
	cp = strings.Replace(cp, ",,", ",", 1)
	c, err := Restore([]byte(cp), &Options{MaxScopeSize: 16 << 20}) // 100,000 subagents hold 7.5 MB
	require.NoError(t, err)
	return c
}

// TestKeyedEventsDoNotCopyTheSet checks that an event that opens or closes
// a step, a reasoning span, a subagent or a tool call allocates about as
// much beside 100,000 open ones as beside 1,000: it copies O(log n) of the
// set, not the set. The bytes are read from runtime.MemStats, so the test
// does not run in parallel.
func TestKeyedEventsDoNotCopyTheSet(t *testing.T) {
	tests := []struct {
		name, holds string
		events      func(i int) []string
	}{
		{"step", "steps", func(i int) []string {
			return []string{fmt.Sprintf(`{"type":"STEP_STARTED","stepName":"x%d"}`, i), fmt.Sprintf(`{"type":"STEP_FINISHED","stepName":"s%d"}`, i)}
		}},
		{"reasoning span", "spans", func(i int) []string {
			return []string{fmt.Sprintf(`{"type":"REASONING_START","messageId":"x%d"}`, i), fmt.Sprintf(`{"type":"REASONING_END","messageId":"r%d"}`, i)}
		}},
		{"subagent", "subagents", func(i int) []string {
			return []string{fmt.Sprintf(`{"type":"SUBAGENT_STARTED","subagentRunId":"x%d"}`, i), fmt.Sprintf(`{"type":"SUBAGENT_FINISHED","subagentRunId":"a%d"}`, i)}
		}},
		{"tool call", "open", func(i int) []string {
			return []string{fmt.Sprintf(`{"type":"TOOL_CALL_START","toolCallId":"x%d","toolCallName":"f","parentMessageId":"m%d"}`, i, i%8),
				fmt.Sprintf(`{"type":"TOOL_CALL_END","toolCallId":"c%d"}`, i)}
		}},
	}
	const runs = 200
	// perEvent returns the bytes and the allocations of one event, on
	// average, over runs runs of the events of tt beside n open ones.
	perEvent := func(t *testing.T, n int, holds string, events func(i int) []string) (bytes, allocs float64) {
		c := openThread(t, n, holds)
		var texts [][]byte
		for i := range runs {
			for _, ev := range events(i) {
				texts = append(texts, []byte(ev))
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, ev := range texts {
			require.NoError(t, c.Apply(ev))
		}
		runtime.ReadMemStats(&after)
		k := float64(len(texts))
		return float64(after.TotalAlloc-before.TotalAlloc) / k, float64(after.Mallocs-before.Mallocs) / k
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			smallBytes, smallAllocs := perEvent(t, 1_000, tt.holds, tt.events)
			largeBytes, largeAllocs := perEvent(t, 100_000, tt.holds, tt.events)
			t.Logf("per event: %.0f B, %.1f allocations beside 1,000; %.0f B, %.1f allocations beside 100,000",
				smallBytes, smallAllocs, largeBytes, largeAllocs)
			// Copying the set would be 100,000 items of 24 bytes or more: 2.4 MB an event.
			assert.Less(t, largeBytes, 2*smallBytes+8<<10, "bytes allocated grow by a log factor at most")
			assert.Less(t, largeAllocs, 2*smallAllocs+10, "allocations grow by a log factor at most")
		})
	}
}
