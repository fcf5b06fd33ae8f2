// The hub: one subscription per Store whose notifications wake the followers of each thread.

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The hub's timing. reconnectDelay is the pause before it subscribes again
// after losing its subscription. pingEvery is how long the subscription
// may stay silent before the hub pings the server; a ping unanswered for
// as long again counts as a lost connection (a server or network gone
// without a word). poll is the longest a follower waits without reading
// its thread's log: insurance against a notification that never comes.
const (
	reconnectDelay = 500 * time.Millisecond
	pingEvery      = 5 * time.Second
	poll           = 5 * time.Second
)

// hub subscribes to the store's channel, on a connection of its own
// outside the client's pool, from the first Follow that waits until Close
// (or until the client is closed), and wakes the followers of the thread
// that each notification names by its log key. Losing the subscription,
// or subscribing again, wakes every follower, so that each reads its log
// once more and misses nothing appended meanwhile.
//
// The append script publishes with PUBLISH, which a Redis Cluster sends to
// every node over the cluster bus: the one subscription, on whichever node
// the client picks, hears the appends to every slot. (Sharded pub/sub,
// SPUBLISH, stays in the slot's shard, and would need a subscription per
// shard.) A go-redis Ring shards channels as it shards keys, so there a
// notification may reach another shard than the subscription's, and a
// follower then waits for its poll.
type hub struct {
	rdb     redis.UniversalClient
	channel string
	logger  *slog.Logger
	poll    time.Duration // poll and pingEvery, but in tests
	ping    time.Duration

	mu      sync.Mutex
	waiters map[string]map[chan struct{}]bool // by log key
	heard   int                               // subscriptions confirmed, for tests
	wakes   int                               // wakes delivered (not merged), for tests
	stop    context.CancelFunc                // nil until the subscriber starts
	done    chan struct{}                     // closed when the subscriber has stopped
	closed  chan struct{}                     // closed by shut
}

func newHub(rdb redis.UniversalClient, channel string, logger *slog.Logger) *hub {
	return &hub{
		rdb:     rdb,
		channel: channel,
		logger:  logger,
		poll:    poll,
		ping:    pingEvery,
		waiters: make(map[string]map[chan struct{}]bool),
		closed:  make(chan struct{}),
	}
}

// register returns a channel that receives a value when the thread whose
// log key is key may have new entries, starting the subscriber if needed,
// or nil once the hub is closed.
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
		go h.run(ctx)
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

// run subscribes until ctx ends or the client is closed, subscribing
// again after each loss.
func (h *hub) run(ctx context.Context) {
	defer close(h.done)
	for {
		err := h.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		h.wakeAll()
		if errors.Is(err, redis.ErrClosed) { // the client is closed
			h.shut()
			return
		}
		h.logger.Warn("aguistate: redis: the subscription that wakes followers failed; subscribing again",
			"channel", h.channel, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(reconnectDelay):
		}
	}
}

// errNoPong reports a subscription whose server did not answer a ping.
var errNoPong = errors.New("no answer to a ping")

// listen subscribes on a new connection and wakes the followers that
// notifications name until the connection fails or ctx ends.
func (h *hub) listen(ctx context.Context) error {
	ps, err := h.subscribe(ctx)
	if err != nil {
		return err
	}
	defer ps.Close()
	unblock := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer unblock()
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, h.ping)
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			if pinged {
				return errNoPong
			}
			if err := ps.Ping(ctx); err != nil {
				return err
			}
			pinged = true
			continue
		}
		if err != nil {
			return err
		}
		pinged = false
		switch msg := msg.(type) {
		case *redis.Subscription: // subscribed (again): appends before it went unheard
			h.mu.Lock()
			h.heard++
			h.mu.Unlock()
			h.wakeAll()
		case *redis.Message:
			h.wake(msg.Payload)
		}
	}
}

// subscribe returns the client's subscription to h.channel. A go-redis
// Ring panics when none of its shards is up: that is an error here.
func (h *hub) subscribe(ctx context.Context) (ps *redis.PubSub, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("subscribe: %v", p)
		}
	}()
	return h.rdb.Subscribe(ctx, h.channel), nil
}

// wake wakes the followers of the thread whose log key is key.
func (h *hub) wake(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.waiters[key] {
		h.wakeOne(ch)
	}
}

func (h *hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, chs := range h.waiters {
		for ch := range chs {
			h.wakeOne(ch)
		}
	}
}

// shut marks the hub closed: the followers that wait see h.closed, and
// later ones get no channel.
func (h *hub) shut() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.closed:
	default:
		close(h.closed)
	}
}

// close shuts the hub, stops the subscriber and waits for it.
func (h *hub) close() {
	h.shut()
	h.mu.Lock()
	stop, done := h.stop, h.done
	h.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// wakeOne wakes the follower that waits on ch; h.mu is held.
func (h *hub) wakeOne(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
		h.wakes++
	default: // already woken
	}
}
