// Tests of error answers: they name what failed and the request id; the details go to the log.

package relay_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logBuffer is a log for a relay's Logger that a test reads.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// downStore is a store whose checkpoint cannot be read, with an error that
// names its server, as a driver's does.
type downStore struct{ relay.Store }

func (downStore) LoadCheckpoint(context.Context, string) (int64, []byte, error) {
	return 0, nil, errors.New("failed to connect to `user=admin database=prod`: dial tcp 10.1.2.3:5432: connection refused")
}

// TestRelayErrorAnswers makes a relay fail at the agent and at the store:
// the client's answer names what failed and the request id, never the
// agent's body nor the store's address, database or user; the log has
// them with the same id.
func TestRelayErrorAnswers(t *testing.T) {
	t.Parallel()
	agent := rawAgent(t, http.StatusInternalServerError, "text/plain", "Traceback: secret key sk-123 at /srv/agent.py")
	tests := []struct {
		name, reason string
		store        relay.Store
		status       int
		says, hides  string
	}{
		{"agent", "a 502 names the agent's status", relay.NewMemory(nil), http.StatusBadGateway,
			"aguistate: the agent answered 500 Internal Server Error", "sk-123"},
		{"store", "a 503 says that the store failed", downStore{relay.NewMemory(nil)}, http.StatusServiceUnavailable,
			"aguistate: the store failed", "10.1.2.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var log logBuffer
			r := relay.New(&aguistate.Agent{URL: agent}, &relay.Options{Store: tt.store, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			base := serve(t, r)
			status, header, body := send(t, http.MethodPost, base+"/agent", "", []byte(`{"threadId":"t","runId":"r","messages":[]}`))
			id := header.Get("X-Request-Id")
			require.Len(t, id, 16)
			assert.Equal(t, tt.status, status, tt.reason)
			assert.Equal(t, tt.says+" (request "+id+")\n", body, tt.reason)
			assert.NotContains(t, body, tt.hides)
			assert.Contains(t, log.String(), tt.hides, "the log has the details")
			assert.Contains(t, log.String(), "request="+id)
		})
	}
}

// TestRequestID checks that a relay answers with the X-Request-Id of the
// request when it is one it takes, and with one of its own otherwise.
func TestRequestID(t *testing.T) {
	t.Parallel()
	_, base := newRelay(t, newAgent(t, nil), relay.Options{})
	for _, tc := range []struct {
		sent string
		kept bool
	}{
		{"req-42.a_b", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"a b", false},
		{"<script>", false},
		{"", false},
	} {
		_, header, body := send(t, http.MethodGet, base+"/threads/nope", "", nil, "X-Request-Id", tc.sent)
		id := header.Get("X-Request-Id")
		if tc.kept {
			assert.Equal(t, tc.sent, id)
		} else {
			assert.Len(t, id, 16, "a new id for %q", tc.sent)
		}
		assert.Contains(t, body, "(request "+id+")")
	}
}
