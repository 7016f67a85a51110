package mcp

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/store"
)

type verifiedKey struct{}

// verifiedFrom returns the token verifyToken verified, or nil.
func verifiedFrom(ctx context.Context) *store.TokenInfo {
	ti, _ := ctx.Value(verifiedKey{}).(*store.TokenInfo)
	return ti
}

type deferredKey struct{}

// deferredFrom returns the check verifyToken deferred, or nil.
func deferredFrom(ctx context.Context) *store.TokenCheck {
	c, _ := ctx.Value(deferredKey{}).(*store.TokenCheck)
	return c
}

// verifyToken verifies, once, the token a request presents or needs, into
// the context (nil when invalid: challengeScope refuses it). A lone call by
// a token this replica has seen with the tool's scope is checked with the
// tool's first statement, in one round trip (docs/performance.md); a
// refusal there replaces the SDK's answer (refusalWriter).
func (h *Handler) verifyToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := requestFrom(r.Context())
		token, sent := bearerToken(r)
		if req == nil || (!sent && req.scope == "") {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		var ti *store.TokenInfo
		if sent {
			if t, ok := h.deferrable(r); ok {
				if cached, ok := h.store.CachedToken(token, h.resource); ok && cached.HasScope(t.scope) {
					check := h.store.NewTokenCheck(token, h.resource, t.scope, !t.ownsUnread)
					ctx = context.WithValue(context.WithValue(ctx, deferredKey{}, check), verifiedKey{}, cached)
					next.ServeHTTP(w, r.WithContext(ctx))
					return
				}
			}
			var err error
			ti, err = h.store.UseAccessToken(ctx, token, h.resource)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				h.checkFailed(w, r, req, err)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, verifiedKey{}, ti)))
	})
}

// deferrable returns the tool of a lone call, in clean text, that does not
// wait: its token's check may travel with its first statement.
func (h *Handler) deferrable(r *http.Request) (*tool, bool) {
	req := requestFrom(r.Context())
	if req.batch || len(req.messages) != 1 || req.messages[0].Method != "tools/call" || !req.cleanText() {
		return nil, false
	}
	if wait, _ := waitOf(r); wait > 0 {
		return nil, false
	}
	t, ok := h.registry[req.messages[0].Params.Name]
	return t, ok
}

// checkFailed answers 503 when the database cannot be reached, else 500.
func (h *Handler) checkFailed(w http.ResponseWriter, r *http.Request, req *rpcRequest, err error) {
	if store.IsUnavailable(err) {
		h.log.WarnContext(r.Context(), "mcp: verify token: database unavailable", "err", err)
		w.Header().Set("Retry-After", "5")
		writeRPCError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, msgUnavailable)
	} else {
		h.log.ErrorContext(r.Context(), "mcp: verify token", "err", err)
		writeRPCError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, msgInternalErr)
	}
	req.answeredAs(metrics.Failed)
}

// bearerToken returns the Authorization header's token, and whether it was sent.
func bearerToken(r *http.Request) (string, bool) {
	v := r.Header.Get("Authorization")
	if v == "" {
		return "", false
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return v, true // sent, but not a bearer token: refused as invalid
	}
	return strings.TrimSpace(token), true
}
