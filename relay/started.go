// The input runId of a thread's last RUN_STARTED, which tells a reconnect from a new run.

package relay

import (
	"bytes"
	"context"
	"encoding/json"
)

// startedRun is what a thread knows of the run id of the input that
// started its last run up to its position: the "runId" of the "input" of the
// log's last RUN_STARTED that holds the relay's record. It is known from the
// events applied since the thread was loaded, and otherwise read once
// from the log (see startedBy).
type startedRun struct {
	runID string
	known bool
}

// note takes event, the log's next event, into s: a RUN_STARTED that
// holds the relay's record of its run (an "input" with a "runId") sets it.
// One without, an agent's next run in the same answer, does not: a
// reconnect of that answer names the input's runId.
func (s *startedRun) note(event []byte) {
	// A type written with an escape (RUN\u005fSTARTED) holds "\u".
	if !bytes.Contains(event, []byte("RUN_STARTED")) && !bytes.Contains(event, []byte(`\u`)) || eventType(event) != "RUN_STARTED" {
		return
	}
	if id := inputRunID(event); id != "" {
		*s = startedRun{runID: id, known: true}
	}
}

// inputRunID returns the "runId" of the "input" of a RUN_STARTED's JSON
// text, or "": the members named exactly so, as a Consumer reads them
// (encoding/json would also take "RunID" or "RUNID", other members).
func inputRunID(event []byte) string {
	dec := json.NewDecoder(bytes.NewReader(event))
	var id string
	if !toMember(dec, "input") || !toMember(dec, "runId") || dec.Decode(&id) != nil {
		return ""
	}
	return id
}

// startedBy reports whether the input that started t's last run had the
// run id runID: the run this relay runs, else the last RUN_STARTED that
// the log holds, whose "input" is the record of it (see startEvents). t
// knows it from the events it applied since it was loaded; else, for a
// POST with a Last-Event-ID (reconnect), as Consumer.RunAgent reconnects,
// it reads the log once, from KeepEvents before the last checkpoint known:
// a run whose RUN_STARTED is trimmed is not found, and the POST is a new
// run. The caller holds t.mu and has synced t.
func (t *thread) startedBy(ctx context.Context, runID string, reconnect bool) bool {
	if ru := t.running; ru != nil {
		return ru.in.RunID == runID
	}
	if !t.started.known {
		if !reconnect {
			return false
		}
		t.findStarted(ctx)
	}
	return t.started.known && t.started.runID != "" && t.started.runID == runID
}

// findStarted sets t.started from the log, read from KeepEvents before the
// last checkpoint known up to t.pos; it stays unknown when the read fails.
// The caller holds t.mu.
func (t *thread) findStarted(ctx context.Context) {
	found := startedRun{known: true} // none in what the log keeps
	for e, err := range t.store.Read(ctx, t.id, max(0, t.cpPos-int64(t.r.o.KeepEvents)-1)) {
		if err != nil {
			return
		}
		if e.Pos > t.pos {
			break
		}
		found.note(e.Event)
	}
	t.started = found
}
