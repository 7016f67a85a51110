package mcp

import (
	"net/http"
	"time"
)

// Every request to /mcp passes the front: a chain of small middlewares, one
// per file, each with one job, that either answers the request or hands it
// on, in this order:
//
//  1. checkOrigin refuses a foreign Origin (DNS rebinding; the app refuses a
//     foreign Host before, inbound.RequireHost);
//  2. cors answers CORS for an allowed Origin, and its preflight;
//  3. refuseTokenInURL refuses an access_token in the query string;
//  4. limitBody bounds the body at inbound.MaxBodyBytes, as the app does;
//  5. parse reads the body once and decodes its JSON-RPC messages, a batch
//     too, into one value in the request's context (rpcRequest) that every
//     later link reads, and limitBatch refuses a batch of more than MaxBatch;
//  6. count counts each tool call of the request once it is answered;
//  7. verifyToken verifies the bearer token a request presents, and that of
//     the calls that need one;
//  8. challengeScope refuses a request whose token is invalid, whatever its
//     method, and the calls without a valid token (401) or without the
//     tool's scope (403);
//  9. answerUnimplemented answers a method the server does not implement
//     (-32601) and a notification it ignores;
//  10. checkArguments refuses arguments that are not valid UTF-8 or hold NUL;
//
// and answer ends it. The front writes its JSON-RPC errors with
// writeRPCError.

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
		h.checkOrigin, h.cors, refuseTokenInURL, limitBody,
		h.parse, limitBatch, h.count, h.verifyToken, h.challengeScope, answerUnimplemented, h.checkArguments)
}

// answer ends the front: a plain tools/list, ping or initialize is answered
// with the SDK's answer built at start (built_answers.go), a verified plain
// tools/call of one of plainTools directly (plain_call.go): there, answering
// in place of the SDK gained at least 20 % calls/s (docs/performance.md).
// Other verified requests go to the SDK behind its bearer check (a call
// whose token's check travels with its statement through refusalWriter),
// and the requests that present no token and need none (no tools/call among
// them, or not a POST) to the SDK as they are. A call that may wait
// (ask_owner with wait_seconds) gets a write deadline that outlasts its
// wait, and, when it asked for progress notifications, an event stream that
// carries them.
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
			h.streamed.ServeHTTP(w, r)
			return
		}
	}
	if pc, ok := h.plainCallOf(r, ti); ok {
		h.answerPlainCall(w, r, ti, pc)
		return
	}
	if check := deferredFrom(r.Context()); check != nil {
		w = newRefusalWriter(w, r, check, func(w http.ResponseWriter, err error) { h.answerRefused(w, r, err) })
	}
	h.authed.ServeHTTP(w, r)
}

// waitMargin is how much longer than its wait a waiting call may take to
// write its answer.
const waitMargin = 30 * time.Second

// waitOf returns how long a request may wait (requestWait).
func waitOf(r *http.Request) (time.Duration, bool) { return requestWait(requestFrom(r.Context())) }
