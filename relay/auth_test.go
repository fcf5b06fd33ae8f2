// Tests of the authorization hook: what every route asks it, how a refusal is answered, and
// the headers it gives the agent.

package relay_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// asked is one call of an Authorize hook.
type asked struct {
	action relay.Action
	thread string
}

// recorder is an Authorize hook that records its calls, grants the
// requests whose Authorization is "Bearer good" with the header X-User
// for the agent, refuses "Bearer bad" with ErrForbidden, a request
// without one with ErrUnauthenticated, and "Bearer down" with another
// error.
type recorder struct {
	mu    sync.Mutex
	calls []asked
}

func (h *recorder) authorize(req *http.Request, action relay.Action, thread string) (relay.Grant, error) {
	h.mu.Lock()
	h.calls = append(h.calls, asked{action, thread})
	h.mu.Unlock()
	switch req.Header.Get("Authorization") {
	case "Bearer good":
		return relay.Grant{Header: http.Header{"X-User": {"ada"}}}, nil
	case "Bearer bad":
		return relay.Grant{}, fmt.Errorf("user bob may not %s: %w", action, relay.ErrForbidden)
	case "Bearer down":
		return relay.Grant{}, errors.New("the token service at 10.0.0.7 does not answer")
	}
	return relay.Grant{}, fmt.Errorf("no token: %w", relay.ErrUnauthenticated)
}

func (h *recorder) take() []asked {
	h.mu.Lock()
	defer h.mu.Unlock()
	calls := h.calls
	h.calls = nil
	return calls
}

// send sends method url with body and the Authorization header auth (none
// when ""), and returns the status, the headers and the body.
func send(t *testing.T, method, url, auth string, body []byte, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestRelayAuthorize calls every route with and without a good token: the
// hook is asked, with the action and the thread (read from the body for a
// POST), before anything is read or run; a refusal is 401 or 403 and
// nothing reaches the agent; the agent gets the header the hook gives.
func TestRelayAuthorize(t *testing.T) {
	t.Parallel()
	a := newAgent(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t1","runId":"r"}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t1","runId":"r"}`),
	})
	h := &recorder{}
	_, base := newRelay(t, a, relay.Options{Authorize: h.authorize})
	input := []byte(`{"threadId":"t1","runId":"r","messages":[]}`)

	routes := []struct {
		name, method, path string
		body               []byte
		header             []string
		action             relay.Action
	}{
		{"run", http.MethodPost, "/agent", input, nil, relay.ActionRun},
		{"reconnect", http.MethodPost, "/agent", input, []string{"Last-Event-ID", "0"}, relay.ActionRun},
		{"read", http.MethodGet, "/threads/t1", nil, nil, relay.ActionRead},
		{"join", http.MethodGet, "/threads/t1/events", nil, nil, relay.ActionJoin},
		{"stop", http.MethodPost, "/threads/t1/stop", nil, nil, relay.ActionStop},
	}
	for _, rt := range routes {
		for _, tc := range []struct {
			auth   string
			status int
		}{{"", http.StatusUnauthorized}, {"Bearer bad", http.StatusForbidden}, {"Bearer down", http.StatusServiceUnavailable}} {
			status, header, body := send(t, rt.method, base+rt.path, tc.auth, rt.body, rt.header...)
			assert.Equal(t, tc.status, status, "%s with %q: %s", rt.name, tc.auth, body)
			want := []asked{{rt.action, "t1"}}
			if rt.path == "/agent" {
				want = []asked{{rt.action, ""}} // refused before the body is read
			}
			assert.Equal(t, want, h.take(), "%s with %q: the hook is asked", rt.name, tc.auth)
			assert.NotContains(t, body, "bob", "the hook's error goes to the log, not to the client")
			assert.NotContains(t, body, "10.0.0.7")
			assert.Contains(t, body, "(request "+header.Get("X-Request-Id")+")")
			if status == http.StatusUnauthorized {
				assert.Equal(t, "Bearer", header.Get("WWW-Authenticate"))
			}
		}
	}
	assert.Empty(t, a.Inputs(), "no refused request reached the agent")

	status, _, body := send(t, http.MethodPost, base+"/agent", "Bearer good", input)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []asked{{relay.ActionRun, ""}, {relay.ActionRun, "t1"}}, h.take(), "before the body, then with its thread")
	require.Len(t, a.Inputs(), 1)
	assert.Equal(t, "ada", a.Header(0).Get("X-User"), "the end user's identity reaches the agent")
	status, _, body = send(t, http.MethodGet, base+"/threads/t1", "Bearer good", nil)
	assert.Equal(t, http.StatusOK, status, body)
	assert.True(t, strings.HasPrefix(body, `{"state":`))
}

// TestRelayWithoutHook checks that a relay without a hook serves everyone,
// as it did before the hook: docs/server.md says that it then authenticates
// nobody.
func TestRelayWithoutHook(t *testing.T) {
	t.Parallel()
	a := newAgent(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t1","runId":"r"}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t1","runId":"r"}`),
	})
	_, base := newRelay(t, a, relay.Options{})
	status, _ := post(t, base, []byte(`{"threadId":"t1","runId":"r","messages":[]}`))
	assert.Equal(t, http.StatusOK, status)
	status, _, _ = send(t, http.MethodGet, base+"/threads/t1", "", nil)
	assert.Equal(t, http.StatusOK, status)
}

// TestRelayAuthorizeBeforeBody sends POST /agent without a token, with the
// header of a 32 MiB body and no byte of it: the relay refuses it at once
// (401), without waiting for the body or taking its size from
// MaxInputBytes. It used to read the body first, and answered 408 once
// InputTimeout had passed.
func TestRelayAuthorizeBeforeBody(t *testing.T) {
	t.Parallel()
	a := newAgent(t, nil)
	h := &recorder{}
	_, base := newRelay(t, a, relay.Options{Authorize: h.authorize, InputTimeout: 5 * time.Second})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /agent HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 32<<20)
	require.NoError(t, err)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, []asked{{relay.ActionRun, ""}}, h.take())
}
