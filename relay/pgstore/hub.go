// The hub: one LISTEN connection whose notifications wake the followers of each thread.

package pgstore

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgxlisten"
)

// reconnectDelay is the pause before the listener reconnects after losing
// its connection.
const reconnectDelay = 500 * time.Millisecond

// hub LISTENs on the store's channel on a connection of its own, from the
// first Follow that waits until Close, and wakes the followers of the
// thread each notification names. Losing its connection, or listening
// again, wakes every follower, so that each reads the log once more and
// misses nothing that was appended meanwhile.
type hub struct {
	connect func(ctx context.Context) (*pgx.Conn, error)
	channel string
	logger  *slog.Logger

	mu      sync.Mutex
	waiters map[string]map[chan struct{}]bool // by notification payload
	stop    context.CancelFunc                // nil until the listener starts
	done    chan struct{}                     // closed when the listener has stopped
	closed  chan struct{}                     // closed by close
}

// register returns a channel that receives a value when the thread whose
// payload is key may have new entries, starting the listener if needed, or
// nil once the hub is closed.
func (h *hub) register(key string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.closed:
		return nil
	default:
	}
	if h.stop == nil {
		ctx, stop := context.WithCancel(context.Background())
		h.stop, h.done = stop, make(chan struct{})
		l := &pgxlisten.Listener{
			Connect:        h.connect,
			ReconnectDelay: reconnectDelay,
			LogError: func(ctx context.Context, err error) {
				if ctx.Err() == nil {
					h.logger.Warn("aguistate: postgres: listener", "channel", h.channel, "err", err)
				}
				h.wakeAll()
			},
		}
		l.Handle(h.channel, h)
		go func() {
			defer close(h.done)
			_ = l.Listen(ctx) // ends with ctx
		}()
	}
	ch := make(chan struct{}, 1)
	if h.waiters[key] == nil {
		h.waiters[key] = make(map[chan struct{}]bool)
	}
	h.waiters[key][ch] = true
	return ch
}

func (h *hub) unregister(key string, ch chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.waiters[key], ch)
	if len(h.waiters[key]) == 0 {
		delete(h.waiters, key)
	}
}

// HandleNotification wakes the followers of the thread that n names.
func (h *hub) HandleNotification(_ context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.waiters[n.Payload] {
		wake(ch)
	}
	return nil
}

// HandleBacklog wakes every follower once the listener listens (again).
func (h *hub) HandleBacklog(context.Context, string, *pgx.Conn) error {
	h.wakeAll()
	return nil
}

func (h *hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, chs := range h.waiters {
		for ch := range chs {
			wake(ch)
		}
	}
}

// close stops the listener and waits for it. The followers that wait see
// h.closed.
func (h *hub) close() {
	h.mu.Lock()
	select {
	case <-h.closed:
	default:
		close(h.closed)
	}
	stop, done := h.stop, h.done
	h.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default: // already woken
	}
}
