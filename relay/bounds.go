// Bounds in total: the bytes of run inputs held at once, and the viewers served at once.

package relay

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// budget bounds a quantity that many requests hold at once, such as bytes.
type budget struct {
	mu          sync.Mutex
	limit, used int64
}

// take takes n from b and reports whether it could: not when b would pass
// its limit.
func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// give gives n back to b.
func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// inputChunk is how many bytes of a run input of unknown length are read,
// and taken from the budget, at a time.
const inputChunk = 64 << 10

// errInputBudget reports a run input that the relay cannot hold now.
var errInputBudget = errors.New("aguistate: the relay holds as many run inputs as it may (MaxInputBytes)")

// readInput reads req's body, a run input, and returns it with the bytes it
// took from r.inputs, which the caller gives back once it no longer holds
// the input. The body must come whole within InputTimeout, be at most
// MaxInput bytes, and fit in what MaxInputBytes leaves. Otherwise
// readInput answers req (408, 413, 503 or 400) and returns nil.
func (r *Relay) readInput(w http.ResponseWriter, req *http.Request) ([]byte, int64) {
	if req.ContentLength > int64(r.o.MaxInput) {
		r.inputTooLarge(w, req)
		return nil, 0
	}
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(r.o.InputTimeout)) == nil
	body := http.MaxBytesReader(w, req.Body, int64(r.o.MaxInput))
	var buf []byte
	var taken int64
	var err error
	if n := req.ContentLength; n >= 0 {
		if !r.inputs.take(n) {
			r.busy(w, req, http.StatusServiceUnavailable, errInputBudget.Error())
			return nil, 0
		}
		taken, buf = n, make([]byte, n)
		if _, err = io.ReadFull(body, buf); err == nil {
			_, err = body.Read(make([]byte, 1)) // io.EOF: the body is as long as it said
			if err == io.EOF {
				err = nil
			}
		}
	} else {
		for err == nil {
			if len(buf) == cap(buf) {
				if !r.inputs.take(inputChunk) {
					err = errInputBudget
					break
				}
				taken += inputChunk
				buf = append(buf, make([]byte, inputChunk)...)[:len(buf)]
			}
			var n int
			n, err = body.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
		}
		if err == io.EOF {
			err = nil
		}
	}
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		if deadline { // the stream that follows has no read deadline
			_ = rc.SetReadDeadline(time.Time{})
		}
		return buf, taken
	case errors.As(err, &tooLarge):
		r.inputTooLarge(w, req)
	case errors.Is(err, errInputBudget):
		r.busy(w, req, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, os.ErrDeadlineExceeded):
		r.fail(w, req, http.StatusRequestTimeout, fmt.Sprintf("aguistate: the run input did not come whole within %v (InputTimeout)", r.o.InputTimeout), err)
	default:
		r.fail(w, req, http.StatusBadRequest, "aguistate: reading the run input failed", err)
	}
	// The connection keeps the deadline: the server does not wait for the
	// rest of a body that trickles before it sends the answer.
	r.inputs.give(taken)
	return nil, 0
}

// inputTooLarge answers a run input larger than MaxInput.
func (r *Relay) inputTooLarge(w http.ResponseWriter, req *http.Request) {
	r.fail(w, req, http.StatusRequestEntityTooLarge, fmt.Sprintf("aguistate: the run input is larger than %d bytes (MaxInput)", r.o.MaxInput), nil)
}

// Errors of a viewer that the relay does not serve now.
var (
	errRelayViewers  = errors.New("aguistate: the relay serves as many event streams as it may (MaxViewers)")
	errThreadViewers = errors.New("aguistate: the thread has as many event streams as the relay serves (MaxThreadViewers)")
)

// admit counts a new event stream of t, or returns why the relay does not
// serve it: errRelayViewers or errThreadViewers. The caller holds r.mu.
func (r *Relay) admit(t *thread) error {
	switch {
	case r.viewers >= r.o.MaxViewers:
		return errRelayViewers
	case t.viewers >= r.o.MaxThreadViewers:
		return errThreadViewers
	}
	r.viewers++
	t.viewers++
	r.tel.viewer(1)
	return nil
}

// leave ends an event stream of t that admit counted.
func (r *Relay) leave(t *thread) {
	r.mu.Lock()
	r.viewers--
	t.viewers--
	r.mu.Unlock()
	r.tel.viewer(-1)
}
