// A store that fails every call at once, as one whose server goes down or whose relay is
// killed, and outages: a namespace's stores taken down and brought back.

package storetest

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
)

// errDown is the error of a faulty store's calls while its fault is down.
var errDown = errors.New("aguistate: storetest: the store is down")

// fault switches the stores that wrap through it: while it is down every
// call of theirs fails, those under way too.
type fault struct {
	mu      sync.Mutex
	down    bool
	lostAck bool          // the next append is made, and its reply lost
	cut     chan struct{} // closed when it goes down
}

func newFault() *fault { return &fault{cut: make(chan struct{})} }

// fail takes the stores down. With lostAck, the first append after it is
// made but fails, as one whose reply a cut connection lost.
func (f *fault) fail(lostAck bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down {
		f.down = true
		close(f.cut)
	}
	f.lostAck = lostAck
}

// restore brings the stores back.
func (f *fault) restore() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		f.down, f.lostAck, f.cut = false, false, make(chan struct{})
	}
}

// state returns whether the stores are down, and a channel closed when
// they go down.
func (f *fault) state() (bool, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.down, f.cut
}

// err returns errDown while the stores are down.
func (f *fault) err() error {
	if down, _ := f.state(); down {
		return errDown
	}
	return nil
}

// faulty is a store that fails while its fault is down. What the store it
// wraps had written stays.
type faulty struct {
	relay.Store
	f *fault
}

func (s faulty) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	s.f.mu.Lock()
	down, lost := s.f.down, s.f.lostAck
	s.f.lostAck = false
	s.f.mu.Unlock()
	if lost {
		_ = s.Store.Append(ctx, thread, pos, events...)
	}
	if down {
		return errDown
	}
	return s.Store.Append(ctx, thread, pos, events...)
}

func (s faulty) Read(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	return s.seq(ctx, func(ctx context.Context) iter.Seq2[relay.Entry, error] { return s.Store.Read(ctx, thread, after) })
}

func (s faulty) Follow(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	return s.seq(ctx, func(ctx context.Context) iter.Seq2[relay.Entry, error] { return s.Store.Follow(ctx, thread, after) })
}

// seq yields what open yields until the fault goes down, when it yields
// errDown, even while open waits.
func (s faulty) seq(ctx context.Context, open func(context.Context) iter.Seq2[relay.Entry, error]) iter.Seq2[relay.Entry, error] {
	return func(yield func(relay.Entry, error) bool) {
		down, cut := s.f.state()
		if down {
			yield(relay.Entry{}, errDown)
			return
		}
		inner, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-cut:
				cancel()
			case <-inner.Done():
			}
		}()
		for e, err := range open(inner) {
			if s.f.err() != nil && ctx.Err() == nil {
				yield(relay.Entry{}, errDown)
				return
			}
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}

func (s faulty) SaveCheckpoint(ctx context.Context, thread string, pos int64, data []byte) error {
	if err := s.f.err(); err != nil {
		return err
	}
	return s.Store.SaveCheckpoint(ctx, thread, pos, data)
}

func (s faulty) LoadCheckpoint(ctx context.Context, thread string) (int64, []byte, error) {
	if err := s.f.err(); err != nil {
		return 0, nil, err
	}
	return s.Store.LoadCheckpoint(ctx, thread)
}

func (s faulty) Trim(ctx context.Context, thread string, before int64) error {
	if err := s.f.err(); err != nil {
		return err
	}
	return s.Store.Trim(ctx, thread, before)
}

func (s faulty) Lease(ctx context.Context, thread, holder, run string, ttl time.Duration) error {
	if err := s.f.err(); err != nil {
		return err
	}
	return s.Store.Lease(ctx, thread, holder, run, ttl)
}

func (s faulty) Release(ctx context.Context, thread, holder string) error {
	if err := s.f.err(); err != nil {
		return err
	}
	return s.Store.Release(ctx, thread, holder)
}

func (s faulty) Stop(ctx context.Context, thread string) error {
	if err := s.f.err(); err != nil {
		return err
	}
	return s.Store.Stop(ctx, thread)
}

func (s faulty) Threads(ctx context.Context, cursor string, limit int) ([]relay.ThreadInfo, string, error) {
	if err := s.f.err(); err != nil {
		return nil, "", err
	}
	return s.Store.Threads(ctx, cursor, limit)
}

func (s faulty) Delete(ctx context.Context, thread string) error {
	if err := s.f.err(); err != nil {
		return err
	}
	return s.Store.Delete(ctx, thread)
}

func (s faulty) Tenant(name string) relay.Store { return faulty{s.Store.Tenant(name), s.f} }

// outage takes the stores of a namespace down at once and brings them
// back: a store with a server through a proxy that cuts its connections,
// one without (relay.Memory) through a fault.
type outage struct {
	open          func(tb testing.TB) relay.Store // a store of the namespace, through the outage
	fail, restore func()
}

// newOutage returns an outage of the stores that h opens on ns. When it
// fails, an append under way may be made and reported failed.
func newOutage(tb testing.TB, h Harness, ns string) *outage {
	if h.Addr != "" {
		p := newProxy(tb, h.Addr)
		return &outage{open: func(tb testing.TB) relay.Store { return h.Open(tb, ns, p.addr) }, fail: p.cut, restore: p.restore}
	}
	f := newFault()
	return &outage{
		open:    func(tb testing.TB) relay.Store { return faulty{h.Open(tb, ns, ""), f} },
		fail:    func() { f.fail(true) },
		restore: f.restore,
	}
}
