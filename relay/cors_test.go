// Tests of CORS: preflights, the answers an allowed origin may read, and the origins refused.

package relay_test

import (
	"net/http"
	"testing"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
)

// TestRelayCORS sends what a browser sends for a page of another origin:
// a preflight for POST /agent with Authorization and Content-Type, and for
// a GET with Last-Event-ID; then the requests. An allowed origin may read
// the answers (with credentials); another gets no
// Access-Control-Allow-Origin; "*" allows any origin without credentials.
func TestRelayCORS(t *testing.T) {
	t.Parallel()
	a := newAgent(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
	})
	_, base := newRelay(t, a, relay.Options{AllowOrigins: []string{"http://app.example", "null"}})
	_, open := newRelay(t, a, relay.Options{AllowOrigins: []string{"*"}})
	input := []byte(`{"threadId":"t","runId":"r","messages":[]}`)

	preflight := func(base, origin, method, headers string) (int, http.Header) {
		status, h, _ := send(t, http.MethodOptions, base+"/agent", "", nil,
			"Origin", origin, "Access-Control-Request-Method", method, "Access-Control-Request-Headers", headers)
		return status, h
	}
	status, h := preflight(base, "http://app.example", "POST", "authorization,content-type")
	assert.Equal(t, http.StatusNoContent, status, "the preflight of a POST is answered (it was 405)")
	assert.Equal(t, "http://app.example", h.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", h.Get("Access-Control-Allow-Credentials"))
	assert.Contains(t, h.Get("Access-Control-Allow-Methods"), "POST")
	assert.Contains(t, h.Get("Access-Control-Allow-Headers"), "Authorization")
	assert.Contains(t, h.Get("Access-Control-Allow-Headers"), "Content-Type")
	assert.Contains(t, h.Get("Access-Control-Allow-Headers"), "Last-Event-ID")
	assert.Contains(t, h.Values("Vary"), "Origin")

	status, h = preflight(base, "http://evil.example", "POST", "authorization")
	assert.Equal(t, http.StatusForbidden, status)
	assert.Empty(t, h.Get("Access-Control-Allow-Origin"))
	status, h = preflight(base, "null", "POST", "authorization")
	assert.Equal(t, http.StatusForbidden, status, "the opaque origin null is never allowed")
	assert.Empty(t, h.Get("Access-Control-Allow-Origin"))

	status, h, _ = send(t, http.MethodPost, base+"/agent", "", input, "Origin", "http://app.example", "Content-Type", "application/json")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "http://app.example", h.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, h.Get("Access-Control-Expose-Headers"), "X-Request-Id")
	for _, path := range []string{"/threads/t", "/threads/t/events"} {
		status, h, _ = send(t, http.MethodGet, base+path, "", nil, "Origin", "http://app.example", "Last-Event-ID", "1")
		assert.Equal(t, http.StatusOK, status, path)
		assert.Equal(t, "http://app.example", h.Get("Access-Control-Allow-Origin"), "%s: an EventSource of the page reads it", path)
		status, h, _ = send(t, http.MethodGet, base+path, "", nil, "Origin", "http://evil.example")
		assert.Equal(t, http.StatusOK, status, "%s: served, but the browser keeps it from the page", path)
		assert.Empty(t, h.Get("Access-Control-Allow-Origin"), path)
	}

	status, h = preflight(open, "http://any.example", "POST", "content-type")
	assert.Equal(t, http.StatusNoContent, status)
	assert.Equal(t, "*", h.Get("Access-Control-Allow-Origin"))
	assert.Empty(t, h.Get("Access-Control-Allow-Credentials"), `"*" allows no credentials`)
	// The Fetch standard's CORS check passes "*" for a request without
	// credentials whatever its origin, an opaque one (Origin: null: a
	// sandboxed frame, a file) included: "*" serves it as any other origin,
	// since any page could call without credentials from an origin of its
	// own. Only "null" named in AllowOrigins is refused, as it names every
	// opaque origin at once and would get credentials.
	status, h = preflight(open, "null", "POST", "content-type")
	assert.Equal(t, http.StatusNoContent, status)
	assert.Equal(t, "*", h.Get("Access-Control-Allow-Origin"), "an opaque origin, under the wildcard")
	assert.Empty(t, h.Get("Access-Control-Allow-Credentials"))
	_, h, _ = send(t, http.MethodGet, open+"/threads/t", "", nil, "Origin", "null")
	assert.Equal(t, "*", h.Get("Access-Control-Allow-Origin"))
	assert.Empty(t, h.Get("Access-Control-Allow-Credentials"))

	_, plain := newRelay(t, a, relay.Options{})
	_, h, _ = send(t, http.MethodGet, plain+"/threads/t", "", nil, "Origin", "http://app.example")
	assert.Empty(t, h.Get("Access-Control-Allow-Origin"), "no origin is allowed by default")
}

// TestParseOrigin checks that an origin is kept as a browser writes it in
// the Origin header, and that what is not an origin is refused.
func TestParseOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		value, want  string // want "" when refused
	}{
		{"plain", "already an origin", "https://app.example.com", "https://app.example.com"},
		{"slash", "a root path is no path", "https://app.example.com/", "https://app.example.com"},
		{"port", "a port other than the default stays", "http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"upper case", "a browser sends the scheme and host in lower case", "HTTPS://App.Example.COM", "https://app.example.com"},
		{"https default port", "a browser leaves the default port out", "https://app.example.com:443", "https://app.example.com"},
		{"http default port", "a browser leaves the default port out", "http://app.example.com:80", "http://app.example.com"},
		{"any", "the wildcard", "*", "*"},
		{"path", "an origin has no path", "https://app.example.com/app", ""},
		{"query", "an origin has no query", "https://app.example.com?x=1", ""},
		{"user", "an origin has no user", "https://u@app.example.com", ""},
		{"scheme", "only http and https pages", "ftp://app.example.com", ""},
		{"no host", "an origin has a host", "https://", ""},
		{"null", "the opaque origin is not one to allow", "null", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := relay.ParseOrigin(tt.value)
			if tt.want == "" {
				assert.Error(t, err, tt.reason)
				return
			}
			assert.NoError(t, err, tt.reason)
			assert.Equal(t, tt.want, got, tt.reason)
		})
	}
}

// TestRelayCORSOriginWritten checks that an allowed origin written with
// capitals and the default port allows the page a browser names without
// them.
func TestRelayCORSOriginWritten(t *testing.T) {
	t.Parallel()
	a := newAgent(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
	})
	_, base := newRelay(t, a, relay.Options{AllowOrigins: []string{"https://App.example.com:443"}})
	status, h, _ := send(t, http.MethodOptions, base+"/agent", "", nil,
		"Origin", "https://app.example.com", "Access-Control-Request-Method", "POST")
	assert.Equal(t, http.StatusNoContent, status)
	assert.Equal(t, "https://app.example.com", h.Get("Access-Control-Allow-Origin"))
}
