// Conformance tests of a store that is down, cut mid-call, or whose context is cancelled.

package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// calls runs every method of s once on thread "t" and returns each error,
// by method name. Read and Follow report the error
// they yield (or nil), and fail tb if they yield an entry.
func calls(tb testing.TB, ctx context.Context, s relay.Store) map[string]error {
	seqErr := func(name string, seq func(yield func(relay.Entry, error) bool)) error {
		for e, err := range seq {
			if err != nil {
				return err
			}
			tb.Errorf("%s yielded entry %d", name, e.Pos)
		}
		return nil
	}
	_, _, loadErr := s.LoadCheckpoint(ctx, "t")
	errs := map[string]error{
		"Append":         s.Append(ctx, "t", 6, event(6)),
		"Read":           seqErr("Read", s.Read(ctx, "t", 5)),
		"Follow":         seqErr("Follow", s.Follow(ctx, "t", 5)),
		"SaveCheckpoint": s.SaveCheckpoint(ctx, "t", 5, []byte("cp5")),
		"LoadCheckpoint": loadErr,
		"Trim":           s.Trim(ctx, "t", 5),
		"Lease":          s.Lease(ctx, "t", "holder", "run", time.Minute),
		"Release":        s.Release(ctx, "t", "holder"),
		"Stop":           s.Stop(ctx, "t"),
	}
	_, _, errs["Threads"] = s.Threads(ctx, "", 10)
	errs["Delete"] = s.Delete(ctx, "t")
	return errs
}

// testCanceled calls every method with a context already cancelled: each
// returns an error wrapping context.Canceled and changes nothing.
func testCanceled(t *testing.T, h Harness) {
	s, _ := open(t, h)
	ctx := testContext(t)
	mustAppend(t, s, "t", 1, events("e", 1, 5)...)
	require.NoError(t, s.SaveCheckpoint(ctx, "t", 3, []byte("cp3")))

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for name, err := range calls(t, canceled, s) {
		assert.ErrorIs(t, err, context.Canceled, name)
	}
	assert.Equal(t, entries(1, events("e", 1, 5)), mustRead(t, s, "t", 0), "no event appended or trimmed")
	pos, data, err := s.LoadCheckpoint(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, int64(3), pos, "no checkpoint saved")
	assert.Equal(t, "cp3", string(data))
}

// assertStoreError checks that err reports a store that cannot be reached:
// an error of ours, and none that a caller would take for an answer.
func assertStoreError(t *testing.T, err error, msg string) {
	t.Helper()
	if !assert.Error(t, err, msg) {
		return
	}
	for _, answer := range []error{relay.ErrConflict, relay.ErrOutOfRange, relay.ErrNoCheckpoint, relay.ErrLeased,
		relay.ErrStopped, relay.ErrNotLeased, context.Canceled, context.DeadlineExceeded} {
		assert.NotErrorIs(t, err, answer, msg)
	}
	assert.True(t, strings.HasPrefix(err.Error(), "aguistate: "), "%s: %q begins with aguistate:", msg, err)
}

// testDown opens a store that is down (its server refuses connections):
// every method returns an error, promptly.
func testDown(t *testing.T, h Harness) {
	o := newOutage(t, h, namespace(t))
	o.fail()
	s := o.open(t)
	ctx, cancel := context.WithTimeout(testContext(t), 30*time.Second)
	defer cancel()
	for name, err := range calls(t, ctx, s) {
		assertStoreError(t, err, name)
	}
}

// testCut cuts a store off (its connections to its server) while a writer
// appends batches through it and a follower waits on it: the calls fail
// with an error, the log holds whole batches including every acknowledged
// one, and the store works again once it is back.
func testCut(t *testing.T, h Harness) {
	ns := namespace(t)
	o := newOutage(t, h, ns)
	via, direct := o.open(t), h.Open(t, ns, "")
	ctx := testContext(t)

	followed := make(chan error, 1)
	go func() {
		_, err := follow(ctx, via, "t", 0, 1<<40)
		followed <- err
	}()

	const size = 5
	acked := make(map[int64]string)
	pos, failures := int64(1), 0
	cut := make(chan struct{})
	for i := 0; failures < 3 && i < 1000; i++ {
		if i == 20 {
			go func() { // while an append is on its way, or soon
				o.fail()
				close(cut)
			}()
		}
		batch := events(fmt.Sprint("b", i), 1, size)
		err := via.Append(ctx, "t", pos, batch...)
		if err == nil {
			for j, e := range batch {
				acked[pos+int64(j)] = string(e)
			}
			pos += size
			continue
		}
		failures++
		assertStoreError(t, err, "append through a cut store")
	}
	require.Equal(t, 3, failures, "appends fail once the connection is cut")

	select {
	case err := <-followed:
		assertStoreError(t, err, "follow through a cut store")
	case <-time.After(30 * time.Second):
		t.Error("a follow through a cut store goes on waiting")
	}

	got := mustRead(t, direct, "t", 0)
	require.Zero(t, len(got)%size, "whole batches: %d entries", len(got))
	for i := 0; i < len(got); i += size {
		var first struct{ Value string }
		require.NoError(t, json.Unmarshal(got[i].Event, &first))
		batch := strings.TrimSuffix(first.Value, "-1")
		assert.Equal(t, events(batch, 1, size), eventsOf(got[i:i+size]), "batch at %d", i+1)
	}
	for pos, e := range acked {
		if assert.Less(t, pos, int64(len(got))+1, "acknowledged position %d is in the log", pos) {
			assert.Equal(t, e, string(got[pos-1].Event), "acknowledged position %d", pos)
		}
	}

	<-cut
	o.restore()
	next := int64(len(got)) + 1
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := via.Append(ctx, "t", next, event("back"))
		if err == nil || time.Now().After(deadline) {
			require.NoError(t, err, "an append once the server is back")
			break
		}
		var ce *relay.ConflictError
		require.False(t, errors.As(err, &ce), "no writer but this one: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, entries(next, [][]byte{event("back")}), mustRead(t, direct, "t", next-1))
}

// eventsOf returns the events of es.
func eventsOf(es []relay.Entry) [][]byte {
	var out [][]byte
	for _, e := range es {
		out = append(out, e.Event)
	}
	return out
}
