// CORS: the pages of other origins that may call the relay, and the preflights they send.

package relay

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The CORS answer of a relay (the Fetch standard, section 3.2): the methods
// and request headers its routes take, the answer headers a page may read,
// and how long a browser may keep a preflight's answer.
const (
	corsMethods       = "GET, POST, DELETE"
	corsHeaders       = "Authorization, Content-Type, Last-Event-ID, X-Request-Id"
	corsExposeHeaders = "X-Request-Id, Retry-After"
	corsMaxAge        = 10 * time.Minute
)

// cors answers CORS for req (see Options.AllowOrigins): it sets the headers
// that let a page of an allowed origin read the answer, and answers a
// preflight (an OPTIONS with Access-Control-Request-Method) itself: 204 for
// an allowed origin, 403 for another. It reports whether it answered req.
// A request of an origin not allowed is served without
// Access-Control-Allow-Origin, so that the browser keeps its answer from
// the page; the authorization hook, not CORS, guards what it may do.
func (r *Relay) cors(w http.ResponseWriter, req *http.Request) bool {
	if len(r.o.AllowOrigins) == 0 {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	origin := req.Header.Get("Origin")
	if origin == "" {
		return false
	}
	preflight := req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != ""
	switch {
	case slices.Contains(r.o.AllowOrigins, origin) && origin != "*" && origin != "null":
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	case slices.Contains(r.o.AllowOrigins, "*"):
		h.Set("Access-Control-Allow-Origin", "*")
	case preflight:
		r.fail(w, req, http.StatusForbidden, "aguistate: the origin "+strconv.Quote(origin)+" is not allowed", nil)
		return true
	default:
		return false
	}
	if !preflight {
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		return false
	}
	h.Set("Access-Control-Allow-Methods", corsMethods)
	h.Set("Access-Control-Allow-Headers", corsHeaders)
	h.Set("Access-Control-Max-Age", strconv.Itoa(int(corsMaxAge/time.Second)))
	w.WriteHeader(http.StatusNoContent)
	return true
}

// ParseOrigin returns the origin s (scheme://host[:port], with no path but
// "/", or "*") as a browser writes it in the Origin header, which a Relay
// compares byte for byte (RFC 6454 section 6.1): the scheme and host in
// lower case, without the scheme's default port. It returns an error for
// a scheme other than http and https, no host, a path, a query or a
// fragment. [New] reads [Options].AllowOrigins with it, and keeps a value
// it refuses as it is (which matches no browser's Origin).
func ParseOrigin(s string) (string, error) {
	if s == "*" {
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("aguistate: %s is not an origin such as https://app.example.com", strconv.Quote(s))
	}
	host := strings.ToLower(u.Host)
	if port := u.Port(); port == map[string]string{"http": "80", "https": "443"}[u.Scheme] {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return u.Scheme + "://" + host, nil
}

// allowOrigins returns origins as ParseOrigin writes them, each that it
// refuses as it is.
func allowOrigins(origins []string) []string {
	out := make([]string, len(origins))
	for i, o := range origins {
		if p, err := ParseOrigin(o); err == nil {
			o = p
		}
		out[i] = o
	}
	return out
}
