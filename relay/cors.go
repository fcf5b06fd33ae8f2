// CORS: the pages of other origins that may call the relay, and the preflights they send.

package relay

import (
	"net/http"
	"slices"
	"strconv"
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
