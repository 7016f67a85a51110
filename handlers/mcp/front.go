package mcp

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/osfoundry/osfoundry/handlers/inbound"
)

// Every request to /mcp passes the front: a chain of small middlewares, each
// with one job, that either answers the request or hands it on, in this
// order:
//
//  1. checkHostAndOrigin refuses a foreign Host or Origin (DNS rebinding);
//  2. cors answers CORS for an allowed Origin, and its preflight;
//  3. refuseTokenInURL refuses an access_token in the query string;
//  4. limitBody bounds the body at maxBodyBytes, as the SDK's handler is;
//  5. parse reads the body once and decodes its JSON-RPC messages into the
//     request's context (rpcRequest), and limitBatch refuses a batch of more
//     than MaxBatch;
//  6. verifyToken verifies the bearer token a request presents, and that of
//     the calls that need one;
//  7. challengeScope refuses a request whose token is invalid, whatever its
//     method, and the calls without a valid token (401) or without the
//     tool's scope (403);
//  8. answerUnimplemented answers a method the server does not implement
//     (-32601) and a notification it ignores;
//  9. checkArguments refuses arguments that are not valid UTF-8 or hold NUL;
//
// and answer ends it: a plain tools/list, ping or initialize with the SDK's
// answer built at start (built_answers.go), a plain tools/call directly
// (plain_call.go), anything else by the SDK. A call that may wait (ask_owner
// with wait_seconds) gets a write deadline that outlasts its wait, and, when
// it asked for progress notifications, an event stream that carries them.

// maxBodyBytes caps a request body, in the front and in the SDK's handler.
const maxBodyBytes = 1 << 20

// ServeHTTP serves /mcp through the front.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.front.ServeHTTP(w, r) }

// middleware is one link of the front.
type middleware func(next http.Handler) http.Handler

// chain puts links in front of last, the first link outermost.
func chain(last http.Handler, links ...middleware) http.Handler {
	for i := len(links) - 1; i >= 0; i-- {
		last = links[i](last)
	}
	return last
}

// newFront builds the chain described above.
func (h *Handler) newFront() http.Handler {
	return chain(http.HandlerFunc(h.answer),
		h.checkHostAndOrigin, h.cors, refuseTokenInURL, limitBody,
		h.parse, limitBatch, h.verifyToken, h.challengeScope, answerUnimplemented, h.checkArguments)
}

// answer ends the front: a plain tools/list, ping or initialize is answered
// with the SDK's answer built at start (built_answers.go), a verified plain
// tools/call directly; other verified requests go to the SDK behind its
// bearer check, and the requests that present no token and need none (no
// tools/call among them, or not a POST) to the SDK as they are.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request) {
	if m, a, ok := h.builtAnswerOf(r); ok {
		h.answerBuilt(w, m, a)
		return
	}
	ti := verifiedFrom(r.Context())
	if ti == nil {
		h.sdk.ServeHTTP(w, r)
		return
	}
	if wait, progress := waitOf(r); wait > 0 {
		// The HTTP server's write timeout is shorter than a wait may be.
		if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + waitMargin)); err != nil {
			h.log.Warn("mcp: cannot extend the write deadline of a waiting call; the server's write timeout may cut it", "err", err)
		}
		if progress {
			if check := deferredFrom(r.Context()); check != nil {
				// Its token is checked before the SDK streams the call.
				if _, err := check.Result(r.Context()); err != nil {
					h.answerRefused(w, r, err)
					return
				}
			}
			h.streamed.ServeHTTP(w, r)
			return
		}
	}
	if pc, ok := h.plainCallOf(r, ti); ok {
		h.answerPlainCall(w, r, ti, pc)
		return
	}
	if check := deferredFrom(r.Context()); check != nil {
		// No longer plain (its token expired meanwhile): checked before
		// the SDK answers, as any other.
		if _, err := check.Result(r.Context()); err != nil {
			h.answerRefused(w, r, err)
			return
		}
	}
	h.authed.ServeHTTP(w, r)
}

// checkHostAndOrigin refuses a request whose Host, or Origin when it sends
// one, is neither the configured public origin nor loopback: the
// DNS-rebinding guard.
func (h *Handler) checkHostAndOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.allowedHost(r.Host) {
			http.Error(w, "Forbidden: unknown Host", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !h.allowedOrigin(origin) {
			http.Error(w, "Forbidden: unknown Origin", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// allowedHost accepts the configured public host and loopback hosts (any
// port).
func (h *Handler) allowedHost(host string) bool { return inbound.HostAllowed(h.publicHost, host) }

// allowedOrigin accepts the configured public origin and loopback origins.
func (h *Handler) allowedOrigin(origin string) bool {
	if strings.EqualFold(origin, h.issuer) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" {
		return false
	}
	return inbound.IsLoopbackHost(u.Host)
}

// cors lets the page of an allowed Origin (checkHostAndOrigin ran) read the
// answers, WWW-Authenticate among them, and answers its preflight.
func (h *Handler) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Add("Vary", "Origin")
		hd.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version")
		if r.Method == http.MethodOptions {
			hd.Set("Access-Control-Allow-Methods", "POST, GET, DELETE, OPTIONS")
			hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID")
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuseTokenInURL refuses a token sent in the query string, where logs and
// referrers would keep it: a token goes in the Authorization header.
func refuseTokenInURL(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("access_token") {
			writeRPC(w, http.StatusBadRequest, false, requestError(jsonrpc.CodeInvalidRequest,
				"access_token in the URL is not accepted: send it in the Authorization header (Bearer)"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// limitBody bounds what can be read of the body to maxBodyBytes; parse
// answers 413 to a longer one.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// waitMargin is how much longer than its wait a waiting call may take to
// write its answer.
const waitMargin = 30 * time.Second

// waitOf returns how long a request may wait (requestWait).
func waitOf(r *http.Request) (time.Duration, bool) { return requestWait(requestFrom(r.Context())) }
