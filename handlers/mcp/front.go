package mcp

import (
	"net/http"
	"time"
)

// Every request to /mcp passes the front: a chain of middlewares, one per
// file, each of which answers the request or hands it on (newFront lists
// them in order). parse decodes the body once into the request's context,
// which every later link reads.

// ServeHTTP serves /mcp through the front.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.front.ServeHTTP(w, r) }

type middleware func(next http.Handler) http.Handler

// chain puts links in front of last, the first link outermost.
func chain(last http.Handler, links ...middleware) http.Handler {
	for i := len(links) - 1; i >= 0; i-- {
		last = links[i](last)
	}
	return last
}

func (h *Handler) newFront() http.Handler {
	return chain(http.HandlerFunc(h.answer),
		h.checkOrigin, h.cors, refuseTokenInURL, limitBody,
		h.parse, limitBatch, h.count, h.verifyToken, h.challengeScope, answerUnimplemented, h.checkArguments)
}

// answer ends the front. It answers itself only where that measured at
// least 20 % more calls/s than the SDK (docs/performance.md): the answers
// built at start (built_answers.go) and the plain calls (plain_call.go).
// Everything else goes to the SDK.
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

// waitMargin is how much longer than its wait a waiting call may take to write its answer.
const waitMargin = 30 * time.Second

func waitOf(r *http.Request) (time.Duration, bool) { return requestWait(requestFrom(r.Context())) }
