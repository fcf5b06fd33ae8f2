// Answers: request ids, and error answers that name what failed and no more.

package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// requestIDKey is the context key of a request's id.
type requestIDKey struct{}

// maxRequestID is the longest X-Request-Id a relay takes from a request.
const maxRequestID = 64

// withRequestID returns req with its id in its context, and sets the
// X-Request-Id header of the answer: the request's own X-Request-Id when it
// has one of 1 to 64 letters, digits, '-', '_' and '.' (as a proxy in front
// sets it, so that both logs name one id), else 16 random hex digits.
func withRequestID(w http.ResponseWriter, req *http.Request) *http.Request {
	id := req.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	w.Header().Set("X-Request-Id", id)
	return req.WithContext(context.WithValue(req.Context(), requestIDKey{}, id))
}

// validRequestID reports whether id is a request id a relay takes.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// requestID returns the id of the request whose context ctx is, or "".
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// fail answers req with status and the text msg, which names what failed
// and nothing the client should not see, followed by the request's id. When
// err is not nil, the Logger gets it with the request's id, at level Warn
// for a status of 500 or more, else Info.
func (r *Relay) fail(w http.ResponseWriter, req *http.Request, status int, msg string, err error) {
	id := requestID(req.Context())
	if err != nil {
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelWarn
		}
		r.o.Logger.Log(req.Context(), level, "aguistate: relay: "+msg, "request", id, "method", req.Method,
			"path", req.URL.Path, "status", status, "err", err)
	}
	if id != "" {
		msg += " (request " + id + ")"
	}
	http.Error(w, msg, status)
}

// busy answers req with status (503 or 429) and a Retry-After of a second.
func (r *Relay) busy(w http.ResponseWriter, req *http.Request, status int, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	r.fail(w, req, status, msg, nil)
}

// retryAfter is the Retry-After of an answer that refuses a request for
// now: a relay's caps, a closed relay.
const retryAfter = time.Second

// storeFailed answers a request that the store failed: 503, with the
// store's error in the log only, since it may name the store's address,
// database or user. A store with no room ([ErrFull]) is named as one.
func (r *Relay) storeFailed(w http.ResponseWriter, req *http.Request, err error) {
	w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	msg := "aguistate: the store failed"
	if errors.Is(err, ErrFull) {
		msg = "aguistate: the store is full"
	}
	r.fail(w, req, http.StatusServiceUnavailable, msg, err)
}
