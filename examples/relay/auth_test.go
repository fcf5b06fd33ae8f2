// Tests of the relay command's authentication: the tokens file, tenants kept apart on every
// route, and the session cookie of a browser's EventSource.

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tokensFile writes a tokens file with content and returns its path.
func tokensFile(t *testing.T, content string) string {
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// TestLoadTokens reads tokens files, good and bad.
func TestLoadTokens(t *testing.T) {
	a, err := loadTokens(tokensFile(t, "# tenants\n\nt0k-a  acme corp\nt0k-b\tbeta\n"))
	require.NoError(t, err)
	for token, tenant := range map[string]string{"t0k-a": "acme corp", "t0k-b": "beta"} {
		req, _ := http.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		got, err := a.bearer(req)
		require.NoError(t, err)
		assert.Equal(t, tenant, got)
	}
	for _, tc := range []struct{ content, err string }{
		{"lonely\n", "not TOKEN TENANT"},
		{"t " + strings.Repeat("x", relay.MaxTenant+1), "longer than 256 bytes"},
		{"# nothing\n", "holds no token"},
	} {
		_, err := loadTokens(tokensFile(t, tc.content))
		assert.ErrorContains(t, err, tc.err)
	}
	_, err = loadTokens(filepath.Join(t.TempDir(), "missing"))
	assert.Error(t, err)
}

// request sends method url with the bearer token (none when "") and
// body, through client, and returns the status and the body.
func request(t *testing.T, client *http.Client, method, url, token string, body []byte, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTenants runs the command with -tokens on every store this machine
// has: tenant a runs thread t1; tenant b can neither read, join nor stop
// it (404, as for a thread that does not exist) nor write into it (its
// POST runs a t1 of its own); a request without a good token gets 401; the
// agent learns whose run it runs.
func TestTenants(t *testing.T) {
	agent := agenttest.NewScript(t, script)
	tokens := tokensFile(t, "tok-a a\ntok-b b\n")
	for _, store := range stores(t) {
		t.Run(strings.SplitN(store, ":", 2)[0], func(t *testing.T) {
			id := newThread(t, "a", "b")
			base := start(t, "-agent", agent.URL, "-store", store, "-tokens", tokens)
			c := aguistate.New(nil)
			_, err := c.RunAgent(context.Background(), &aguistate.Agent{URL: base + "/agent", Header: http.Header{"Authorization": {"Bearer tok-a"}}},
				&aguistate.RunOptions{ThreadID: id})
			require.NoError(t, err)
			inputs := len(agent.Inputs())
			assert.Equal(t, "a", agent.Header(inputs-1).Get("X-Aguistate-Tenant"))

			for _, rt := range []struct{ method, path string }{
				{http.MethodGet, "/threads/" + id}, {http.MethodGet, "/threads/" + id + "/events"}, {http.MethodPost, "/threads/" + id + "/stop"},
			} {
				status, body := request(t, http.DefaultClient, rt.method, base+rt.path, "tok-b", nil)
				assert.Equal(t, http.StatusNotFound, status, "b: %s %s: %s", rt.method, rt.path, body)
				status, _ = request(t, http.DefaultClient, rt.method, base+rt.path, "", nil)
				assert.Equal(t, http.StatusUnauthorized, status, "no token: %s %s", rt.method, rt.path)
				status, _ = request(t, http.DefaultClient, rt.method, base+rt.path, "tok-x", nil)
				assert.Equal(t, http.StatusUnauthorized, status, "an unknown token: %s %s", rt.method, rt.path)
			}
			input := []byte(`{"threadId":"` + id + `","runId":"` + c.RunID() + `","messages":[{"id":"evil","role":"user","content":"mine now"}]}`)
			status, _ := request(t, http.DefaultClient, http.MethodPost, base+"/agent", "", input)
			assert.Equal(t, http.StatusUnauthorized, status)
			status, _ = request(t, http.DefaultClient, http.MethodPost, base+"/agent", "tok-b", input, "Last-Event-ID", "0")
			assert.Equal(t, http.StatusOK, status, "b runs a thread of its own")
			assert.Equal(t, "b", agent.Header(len(agent.Inputs())-1).Get("X-Aguistate-Tenant"))
			status, body := request(t, http.DefaultClient, http.MethodGet, base+"/threads/"+id, "tok-a", nil)
			require.Equal(t, http.StatusOK, status)
			assert.JSONEq(t, threadJSON(t, c), body, "a's thread is as a left it")
			assert.NotContains(t, body, "mine now")
		})
	}
}

// TestSession gets a session cookie as a browser page does and joins with
// it: the cookie is HttpOnly and SameSite=Strict; it joins and reads the
// tenant's threads, and nothing else; one that was tampered with is
// refused. A page of an allowed origin may get it across origins.
func TestSession(t *testing.T) {
	agent := agenttest.NewScript(t, script)
	base := start(t, "-agent", agent.URL, "-tokens", tokensFile(t, "tok-a a\n"), "-cors-origin", "http://app.example")
	id := newThread(t)
	status, _ := request(t, http.DefaultClient, http.MethodPost, base+"/agent", "tok-a", []byte(`{"threadId":"`+id+`","runId":"r","messages":[]}`))
	require.Equal(t, http.StatusOK, status)

	status, _ = request(t, http.DefaultClient, http.MethodPost, base+"/session", "", nil)
	assert.Equal(t, http.StatusUnauthorized, status, "a session needs a token")
	req, err := http.NewRequest(http.MethodPost, base+"/session", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok-a")
	req.Header.Set("Origin", "http://app.example")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, "http://app.example", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
	cookie := resp.Header.Get("Set-Cookie")
	assert.Contains(t, cookie, "HttpOnly")
	assert.Contains(t, cookie, "SameSite=Strict")
	assert.Contains(t, cookie, "Path=/threads/")

	status, _ = request(t, http.DefaultClient, http.MethodOptions, base+"/session", "", nil,
		"Origin", "http://app.example", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization")
	assert.Equal(t, http.StatusNoContent, status, "the relay answers the preflight of POST /session")

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	jar.SetCookies(resp.Request.URL, resp.Cookies())
	browser := &http.Client{Jar: jar}
	status, body := request(t, browser, http.MethodGet, base+"/threads/"+id+"/events", "", nil)
	assert.Equal(t, http.StatusOK, status, "the cookie joins: %s", body)
	assert.Contains(t, body, "data: ")
	status, _ = request(t, browser, http.MethodGet, base+"/threads/"+id, "", nil)
	assert.Equal(t, http.StatusOK, status, "and reads")
	status, _ = request(t, browser, http.MethodPost, base+"/threads/"+id+"/stop", "", nil)
	assert.Equal(t, http.StatusUnauthorized, status, "but does not stop")

	value := resp.Cookies()[0].Value
	for _, forged := range []string{value[:len(value)-2] + "xx", strings.Replace(value, ".", ".Yg", 1), "nonsense"} {
		status, _ = request(t, http.DefaultClient, http.MethodGet, base+"/threads/"+id, "", nil, "Cookie", sessionCookie+"="+forged)
		assert.Equal(t, http.StatusUnauthorized, status, "a forged cookie %q", forged)
	}
}

// TestSessionExpiry checks that a session cookie holds its tenant until it
// expires, and that a cookie signed with another file's key is refused.
func TestSessionExpiry(t *testing.T) {
	a, err := loadTokens(tokensFile(t, "tok-a a\n"))
	require.NoError(t, err)
	other, err := loadTokens(tokensFile(t, "tok-a b\n"))
	require.NoError(t, err)
	now := time.Now()
	value := a.sign("a", now.Add(time.Minute))
	tenant, err := a.session(value, now)
	require.NoError(t, err)
	assert.Equal(t, "a", tenant)
	_, err = a.session(value, now.Add(time.Minute))
	assert.ErrorIs(t, err, relay.ErrUnauthenticated, "expired")
	_, err = other.session(value, now)
	assert.ErrorIs(t, err, relay.ErrUnauthenticated, "another file's key")
}

// TestServerTimeouts checks that the command's server closes connections
// that send their header slowly or stay idle.
func TestServerTimeouts(t *testing.T) {
	srv := newServer(http.NotFoundHandler())
	assert.Positive(t, srv.ReadHeaderTimeout)
	assert.Positive(t, srv.IdleTimeout)
	assert.Zero(t, srv.ReadTimeout, "a ReadTimeout would cut the event streams; the relay bounds a body's time itself")
}
