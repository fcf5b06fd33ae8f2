// Conformance test of a follower whose thread is deleted and made again at once by another
// writer: it must not take the new thread's events as the old one's next.

package storetest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRelayFollowRecreated follows a thread of one run on relay a between
// runs, then deletes it (Store.Delete, as another relay's DELETE does) and
// at once writes a longer thread of the same id to the store, as another
// relay's runs would: the follower's stream must end (its thread is gone),
// never go on with the new thread's events after its old position, which
// a client would apply to the old thread as its next.
func testRelayFollowRecreated(t *testing.T, h Harness) {
	tests := []struct {
		name, reason string
		runs         int // of the new thread, each of the old one's length
	}{
		{"longer", "the new log passes the follower's position", 3},
		{"as long", "the new log ends at the follower's position", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ns := open(t, h)
			store := h.Open(t, ns, "")
			agent := agenttest.NewScript(t, script(2))
			a := newRelayServer(t, agent.URL, h.Open(t, ns, ""), true)
			c, ag := client(t, a.srv.URL, "t")
			_, err := c.RunAgent(testContext(t), ag, nil)
			require.NoError(t, err)
			old := logOf(t, store, "t")
			v := openLive(t, a.srv.URL+"/threads/t/events?follow=thread", "")
			require.Equal(t, http.StatusOK, v.resp.StatusCode)
			v.until(t, 1) // the prelude, to the old run's end

			ctx := testContext(t)
			require.NoError(t, store.Delete(ctx, "t"))
			pos := int64(0)
			for run := range tc.runs {
				for _, e := range old {
					ev := e.Event
					if run > 0 {
						ev = []byte(fmt.Sprintf(`{"type":"CUSTOM","name":"new","value":%d}`, pos))
					}
					pos++
					require.NoError(t, store.Append(ctx, "t", pos, ev))
				}
			}
			for e, ok := v.next(t); ok; e, ok = v.next(t) {
				if !assert.NotContains(t, e.data, `"new"`, "%s: event %s of the new thread went to the old one's follower", tc.reason, e.id) {
					v.close()
					break
				}
			}
		})
	}
}
