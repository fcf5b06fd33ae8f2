// A thread as a Relay holds it: its Consumer, its position, and the hub that feeds its viewers.

package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aguistate/aguistate"
)

// thread is a thread in use in a relay: a Consumer that holds it up to a
// position of its log, the run this relay runs on it, and the viewers that
// follow it here, fed by one watcher that follows the log.
type thread struct {
	r       *Relay
	key     threadKey
	id      string
	store   Store // the store as the thread's tenant sees it
	refs    int   // guarded by r.mu
	viewers int   // event streams served; guarded by r.mu
	resting int   // follow=thread streams waiting for the next run (see rest); guarded by r.mu

	mu      sync.Mutex
	c       *aguistate.Consumer // nil when it must be loaded again
	pos     int64               // the log's events that c has applied
	cpPos   int64               // position of the store's checkpoint, as far as known
	started startedRun          // the input runId of the log's last RUN_STARTED up to pos (see startedBy)
	running *run                // this relay's run on the thread, or nil
	gone    chan struct{}       // closed when the thread is deleted through this relay (see deleted), then made again

	subs      map[*sub]struct{}
	lagging   map[*sub]int64     // subs the hub dropped, by the position after which they read the log
	hubPos    int64              // the last position delivered to subs
	stopWatch context.CancelFunc // stops the watcher; nil when none runs
	progress  bool               // an event came since the watcher last looked
	trimTo    int64              // the log is to be trimmed before it once the hub has passed it; 0 when not
}

// entry is an event of the log, as the hub delivers it to viewers.
type entry struct {
	pos   int64
	event []byte
	end   bool // a RUN_FINISHED or RUN_ERROR
}

// sub is a viewer's subscription to a thread's hub. The hub drops a viewer
// that falls too far behind (see drop); the viewer then reads the log
// itself.
type sub struct {
	ch    chan entry
	bytes atomic.Int64 // the size of the events in ch
	holds bool         // the stream of a run to the client that POSTed it: trims wait for it (see fallBehind)
}

// subBuffer is how many events a viewer may fall behind the hub before it
// reads them from the store itself; Options.ViewerBuffer bounds their
// bytes.
const subBuffer = 1024

// take returns the size of an event the viewer received from s.ch.
func (s *sub) take(e entry) { s.bytes.Add(-int64(len(e.event))) }

// drop ends s: it lets go the events that s.ch holds, which a viewer that
// is stalled in a write would otherwise keep, and closes it. The caller
// holds t.mu and has removed s from t.subs.
func (s *sub) drop() {
	for {
		select {
		case <-s.ch:
			continue
		default:
		}
		break
	}
	s.bytes.Store(0)
	close(s.ch)
}

// fallBehind drops s, a viewer that cannot take the log's event at pos
// (the next the hub delivers), from the hub: it reads the log itself from
// there on. Other viewers' events are let go (see drop): one that falls
// behind a trim gets a prelude when it reconnects. A run's stream to the
// client that POSTed it (holds) keeps the events it has (ViewerBuffer at
// most), and no trim passes pos-1 until it is back (see caughtUp), so that
// it does not lose its place in the log and end with a RUN_ERROR: a client
// that stalls holds them for WriteTimeout at most. The caller holds t.mu
// and has removed s from t.subs.
func (t *thread) fallBehind(s *sub, pos int64) {
	if !s.holds {
		s.drop()
		return
	}
	close(s.ch)
	if t.lagging == nil {
		t.lagging = make(map[*sub]int64)
	}
	t.lagging[s] = pos - 1
}

// caughtUp ends the hold that s, dropped from the hub, had on trims, and
// returns the position before which the log is to be trimmed now, or 0
// (see heldTrim). The caller holds t.mu.
func (t *thread) caughtUp(s *sub) int64 {
	delete(t.lagging, s)
	return t.heldTrim()
}

// trimFloor returns the position after which the log must keep every
// entry: that of the viewers the hub dropped and of the hub itself, while
// its watcher runs; -1 when nothing holds the log. The caller holds t.mu.
func (t *thread) trimFloor() int64 {
	floor := int64(-1)
	if t.stopWatch != nil {
		floor = t.hubPos
	}
	for _, pos := range t.lagging {
		if floor < 0 || pos < floor {
			floor = pos
		}
	}
	return floor
}

// sync brings t.c up to the end of the log, loading the thread from its
// checkpoint first when t.c is nil. The caller holds t.mu.
func (t *thread) sync(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		if t.c == nil {
			if err := t.load(ctx); err != nil {
				return err
			}
		}
		err := t.catchUp(ctx)
		if errors.Is(err, ErrOutOfRange) && attempt < 3 { // trimmed past t.pos: a newer checkpoint
			t.c = nil
			continue
		}
		if err != nil {
			t.c = nil
		}
		return err
	}
}

// writesLog reports whether t.c holds the whole log because this relay
// writes it: its run holds the thread's lease, every event of the log up to
// t.pos went through t.c, and the run's last append ended at t.pos. A
// viewer's join then needs no read of the store to bring t up to date;
// what another writer may have appended since (a lost lease) it reads from
// the log after its join position, as it reads what comes during the join.
// The caller holds t.mu.
func (t *thread) writesLog() bool {
	return t.c != nil && t.running != nil && t.pos == t.running.lastPos
}

// load sets t.c to the thread's checkpoint, or a new Consumer when it has
// none.
func (t *thread) load(ctx context.Context) error {
	pos, data, err := t.store.LoadCheckpoint(ctx, t.id)
	if errors.Is(err, ErrNoCheckpoint) {
		t.c, t.pos, t.cpPos = aguistate.New(t.r.o.Consumer), 0, 0
		t.started = startedRun{known: true} // no RUN_STARTED yet
		return nil
	}
	if err != nil {
		return err
	}
	c, err := aguistate.Restore(data, t.r.o.Consumer)
	if err != nil {
		return fmt.Errorf("aguistate: thread %q: the checkpoint at position %d: %w", t.id, pos, err)
	}
	t.c, t.pos, t.cpPos = c, pos, pos
	t.started = startedRun{} // in the log before the checkpoint, or later: see startedBy
	return nil
}

// catchUp applies to t.c the log's events after t.pos.
func (t *thread) catchUp(ctx context.Context) error {
	for e, err := range t.store.Read(readAtEnd(ctx), t.id, t.pos) {
		if err != nil {
			return err
		}
		t.applyLogged(e)
	}
	return nil
}

// applyLogged applies an event of the log at t.pos+1 to t.c. The log holds
// only events a Consumer took, so an error means that another relay has
// other limits: it is logged, and the event counts, as in any Consumer.
func (t *thread) applyLogged(e Entry) {
	if err := t.c.Apply(e.Event); err != nil {
		t.r.o.Logger.Warn("aguistate: relay: an event of the log does not apply", "thread", t.id, "pos", e.Pos, "err", err)
	}
	t.pos = e.Pos
	t.started.note(e.Event)
}

// subscribe adds a viewer to t's hub and returns it. The hub delivers it
// the events it follows in the log, in order, from a position at most
// t.pos on. The caller holds t.mu.
func (t *thread) subscribe() *sub {
	if t.stopWatch == nil {
		ctx, stop := context.WithCancel(t.r.ctx)
		t.stopWatch, t.hubPos = stop, t.pos
		go t.watch(ctx, t.pos)
		go t.watchLease(ctx)
	}
	s := &sub{ch: subChans.Get().(chan entry)}
	t.subs[s] = struct{}{}
	return s
}

// subChans holds the channels of subscriptions that ended on the hub (see
// unsubscribe), emptied, for the next: one of subBuffer entries takes 40
// KB, which each join would allocate and clear.
var subChans = sync.Pool{New: func() any { return make(chan entry, subBuffer) }}

// unsubscribe removes a viewer; the last stops the watcher. It returns the
// position before which the log is to be trimmed now that the watcher no
// longer holds the trim back (see heldTrim), or 0. The caller holds t.mu.
func (t *thread) unsubscribe(s *sub) (trim int64) {
	if _, on := t.subs[s]; on { // its channel is open, and the hub sends it nothing more
		delete(t.subs, s)
		for len(s.ch) > 0 {
			<-s.ch
		}
		s.bytes.Store(0)
		subChans.Put(s.ch)
		s.ch = nil
	}
	delete(t.lagging, s)
	if len(t.subs) == 0 {
		t.stopWatching()
	}
	return t.heldTrim()
}

// stopWatching stops the watcher and drops the viewers. The caller holds
// t.mu.
func (t *thread) stopWatching() {
	if t.stopWatch != nil {
		t.stopWatch()
		t.stopWatch = nil
	}
	for s := range t.subs {
		delete(t.subs, s)
		s.drop()
	}
}

// watch follows the log after position after, applies to t.c the events
// no writer of this relay applied, and delivers each to the viewers, until
// ctx ends. A store that fails is retried.
func (t *thread) watch(ctx context.Context, after int64) {
	for wait := 100 * time.Millisecond; ctx.Err() == nil; wait = min(2*wait, 5*time.Second) {
		var err error
		for e, ferr := range t.store.Follow(readAtEnd(ctx), t.id, after) {
			if err = ferr; err != nil {
				break
			}
			if ctx.Err() != nil { // stopped: let go of the page read
				return
			}
			wait = 100 * time.Millisecond
			t.mu.Lock()
			if ctx.Err() != nil { // stopped while it waited for t.mu: a watcher started since may own the hub
				t.mu.Unlock()
				return
			}
			if t.c != nil && e.Pos == t.pos+1 {
				t.applyLogged(e)
			}
			t.deliver(entry{pos: e.Pos, event: e.Event, end: endsRun(e.Event)})
			before := t.heldTrim()
			t.mu.Unlock()
			t.r.trim(ctx, t, before)
			after = e.Pos
		}
		if ctx.Err() != nil {
			return
		}
		t.r.o.Logger.Warn("aguistate: relay: following a thread failed", "thread", t.id, "err", err)
		if errors.Is(err, ErrOutOfRange) { // trimmed behind the watcher: its viewers need a prelude
			t.mu.Lock()
			if ctx.Err() != nil {
				t.mu.Unlock()
				return
			}
			for s := range t.subs {
				delete(t.subs, s)
				s.drop()
			}
			if err := t.sync(ctx); err == nil {
				after, t.hubPos = t.pos, t.pos
			}
			t.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// deliver gives the log's event at t.hubPos+1 to every viewer, and drops a
// viewer whose buffer is full, by count or by bytes (it reads the store
// itself: see fallBehind). The caller holds t.mu.
func (t *thread) deliver(e entry) {
	if e.pos != t.hubPos+1 {
		return
	}
	t.hubPos, t.progress = e.pos, true
	size := int64(len(e.event))
	for s := range t.subs {
		if held := s.bytes.Load(); held > 0 && held+size > int64(t.r.o.ViewerBuffer) {
			delete(t.subs, s)
			t.fallBehind(s, e.pos)
			continue
		}
		s.bytes.Add(size)
		select {
		case s.ch <- e:
		default:
			s.bytes.Add(-size)
			delete(t.subs, s)
			t.fallBehind(s, e.pos)
		}
	}
}

// appendOwn applies to t.c an event the relay makes and appends it at
// t.pos+1. On a failure t.c must be loaded again. The caller holds t.mu
// and has synced t.
func (t *thread) appendOwn(ctx context.Context, event []byte) error {
	if err := t.c.Apply(event); err != nil {
		t.c = nil
		return err
	}
	if err := t.store.Append(ctx, t.id, t.pos+1, event); err != nil {
		t.c = nil
		return err
	}
	t.pos++
	return nil
}

// msgRunLost is the message of the RUN_ERROR of code CodeRunLost.
const msgRunLost = "the relay that ran this run stopped before it ended"

// runError returns the JSON text of a RUN_ERROR with code and message.
func runError(code, message string) []byte {
	ev, _ := json.Marshal(struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Code    string `json:"code"`
	}{"RUN_ERROR", message, code})
	return ev
}

// endsRun reports whether event is a RUN_FINISHED or a RUN_ERROR.
func endsRun(event []byte) bool {
	// A type written with an escape (RUN\u005fFINISHED) holds "\u".
	if !bytes.Contains(event, []byte(`"RUN_FINISHED"`)) && !bytes.Contains(event, []byte(`"RUN_ERROR"`)) &&
		!bytes.Contains(event, []byte(`\u`)) {
		return false
	}
	typ := eventType(event)
	return typ == "RUN_FINISHED" || typ == "RUN_ERROR"
}

// eventType returns the "type" of an event's JSON text, or "": the member
// named exactly "type", as a Consumer reads it (encoding/json would also
// take "Type" or "TYPE", which are other members).
func eventType(event []byte) string {
	dec := json.NewDecoder(bytes.NewReader(event))
	var typ string
	if !toMember(dec, "type") || dec.Decode(&typ) != nil {
		return ""
	}
	return typ
}

// toMember reads from dec, at the start of a JSON object, up to the value
// of its member named exactly name (the first, where a log's events have
// one of each), and reports whether it is there.
func toMember(dec *json.Decoder, name string) bool {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		if key == name {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}
