// Authentication of the relay command: bearer tokens of a file, each a tenant's, and the
// session cookie that lets a browser's EventSource join.

package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aguistate/aguistate/relay"
)

// sessionCookie is the name of the cookie that POST /session sets, and
// sessionTTL how long it lasts.
const (
	sessionCookie = "aguistate_session"
	sessionTTL    = 12 * time.Hour
)

// tenantHeader is the header that tells the agent whose run it runs.
const tenantHeader = "X-Aguistate-Tenant"

// tokens authenticates the relay's requests with the bearer tokens of a
// file, each naming its tenant (see loadTokens).
//
// A browser's EventSource cannot set an Authorization header, and a token
// in a URL ends up in logs: so a page POSTs /session with its token once
// (fetch with credentials: "include"), and gets an HttpOnly cookie that
// names its tenant, signed with a key made from the file (so that every
// relay that reads the file takes it), for 12 hours. The cookie goes with
// the page's EventSource (withCredentials: true) and GETs of
// /threads/..., from the page's origin when it is allowed (-cors-origin)
// and on the relay's site (SameSite=Strict: a page of app.example.com and
// a relay of relay.example.com, or two ports of one host). It joins and
// reads only: a run or a stop needs the token, so that no other page of the
// site can start one with the cookie (CSRF).
type tokens struct {
	tenants map[[sha256.Size]byte]string // by the token's SHA-256, which a lookup compares
	key     []byte                       // signs session cookies
}

// loadTokens reads the tokens file at path: a line per token, "TOKEN
// TENANT" (the tenant is the rest of the line, trimmed; at most
// relay.MaxTenant bytes), with blank lines and lines that begin with '#'
// left out.
func loadTokens(path string) (*tokens, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, []byte("aguistate relay session key"))
	mac.Write(data)
	a := &tokens{tenants: make(map[[sha256.Size]byte]string), key: mac.Sum(nil)}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		token, tenant := line, ""
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			token, tenant = line[:i], strings.TrimSpace(line[i:])
		}
		switch {
		case tenant == "":
			return nil, fmt.Errorf("%s:%d: not TOKEN TENANT", path, n)
		case len(tenant) > relay.MaxTenant:
			return nil, fmt.Errorf("%s:%d: the tenant is longer than %d bytes", path, n, relay.MaxTenant)
		}
		a.tenants[sha256.Sum256([]byte(token))] = tenant
	}
	if len(a.tenants) == 0 {
		return nil, fmt.Errorf("%s holds no token", path)
	}
	return a, sc.Err()
}

// authorize is the relay's Authorize hook: a request with a known bearer
// token may do anything in its tenant, whose name goes to the agent in
// X-Aguistate-Tenant; one with a session cookie may join and read.
func (a *tokens) authorize(req *http.Request, action relay.Action, _ string) (relay.Grant, error) {
	if tenant, err := a.bearer(req); err == nil || req.Header.Get("Authorization") != "" {
		return relay.Grant{Tenant: tenant, Header: http.Header{tenantHeader: {tenant}}}, err
	}
	c, err := req.Cookie(sessionCookie)
	if err != nil {
		return relay.Grant{}, fmt.Errorf("no token: %w", relay.ErrUnauthenticated)
	}
	tenant, err := a.session(c.Value, time.Now())
	switch {
	case err != nil:
		return relay.Grant{}, err
	case action != relay.ActionJoin && action != relay.ActionRead:
		return relay.Grant{}, fmt.Errorf("a session cookie joins and reads, it does not %s: %w", action, relay.ErrUnauthenticated)
	}
	return relay.Grant{Tenant: tenant}, nil
}

// bearer returns the tenant of req's bearer token, or an error wrapping
// relay.ErrUnauthenticated.
func (a *tokens) bearer(req *http.Request) (string, error) {
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", fmt.Errorf("no bearer token: %w", relay.ErrUnauthenticated)
	}
	tenant, ok := a.tenants[sha256.Sum256([]byte(token))]
	if !ok {
		return "", fmt.Errorf("an unknown token: %w", relay.ErrUnauthenticated)
	}
	return tenant, nil
}

// serveSession serves POST /session: with a known bearer token it sets the
// session cookie of the token's tenant and answers 204; otherwise 401.
// A page of an origin in origins may call it across origins, with
// credentials (the relay answers the preflight).
func (a *tokens) serveSession(origins []string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if origin := req.Header.Get("Origin"); origin != "" && origin != "null" && slices.Contains(origins, origin) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
			w.Header().Add("Vary", "Origin")
		}
		tenant, err := a.bearer(req)
		if err != nil {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "aguistate: not authenticated", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: sessionCookie, Value: a.sign(tenant, time.Now().Add(sessionTTL)), Path: "/threads/",
			MaxAge: int(sessionTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
			Secure: req.TLS != nil || req.Header.Get("X-Forwarded-Proto") == "https",
		})
		w.WriteHeader(http.StatusNoContent)
	}
}

// sign returns the value of a session cookie of tenant that expires at
// expires: "EXPIRES.TENANT.MAC", the Unix time in seconds, the tenant in
// base64url, and the HMAC-SHA256 of both.
func (a *tokens) sign(tenant string, expires time.Time) string {
	payload := strconv.FormatInt(expires.Unix(), 10) + "." + base64.RawURLEncoding.EncodeToString([]byte(tenant))
	return payload + "." + base64.RawURLEncoding.EncodeToString(a.mac(payload))
}

// session returns the tenant of a session cookie's value, at now, or an
// error wrapping relay.ErrUnauthenticated when it is not one that sign
// made, or has expired.
func (a *tokens) session(value string, now time.Time) (string, error) {
	bad := fmt.Errorf("a session cookie that is not one: %w", relay.ErrUnauthenticated)
	i := strings.LastIndexByte(value, '.')
	if i < 0 {
		return "", bad
	}
	payload := value[:i]
	mac, err := base64.RawURLEncoding.DecodeString(value[i+1:])
	if err != nil || !hmac.Equal(mac, a.mac(payload)) {
		return "", bad
	}
	expiry, enc, _ := strings.Cut(payload, ".")
	seconds, err := strconv.ParseInt(expiry, 10, 64)
	tenant, err2 := base64.RawURLEncoding.DecodeString(enc)
	switch {
	case errors.Join(err, err2) != nil:
		return "", bad
	case !now.Before(time.Unix(seconds, 0)):
		return "", fmt.Errorf("an expired session: %w", relay.ErrUnauthenticated)
	}
	return string(tenant), nil
}

func (a *tokens) mac(payload string) []byte {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}
