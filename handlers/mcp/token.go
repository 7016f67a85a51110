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

// verifiedKey carries the token verifyToken verified (nil: none valid).
type verifiedKey struct{}

// verifiedFrom returns the token verifyToken verified, or nil.
func verifiedFrom(ctx context.Context) *store.TokenInfo {
	ti, _ := ctx.Value(verifiedKey{}).(*store.TokenInfo)
	return ti
}

// deferredKey carries the *store.TokenCheck of a call whose token is
// checked with its first statement.
type deferredKey struct{}

// deferredFrom returns the check verifyToken deferred, or nil.
func deferredFrom(ctx context.Context) *store.TokenCheck {
	c, _ := ctx.Value(deferredKey{}).(*store.TokenCheck)
	return c
}

// verifyToken verifies, once, the bearer token a request presents, and the
// token of a request with a tools/call among its messages, and puts what it
// found in the context (nil for no token or an invalid one: challengeScope
// refuses those). A lone call of a tool, by a token this replica has checked
// before whose scopes held the tool's, is verified by a check that travels
// with the tool's first statement (store.NewTokenCheck, AsCaller): the token
// is still checked in the database, in the call's own round trip, and a
// refusal replaces the SDK's answer (refusalWriter). A call that waits, or
// whose arguments checkArguments would refuse, is checked first, as any
// other. A database that fails the check answers 503 (unreachable) or 500.
// Only a request that presents no token and needs none passes without a
// look at the database.
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

// deferrable returns the tool of a request whose token's check may travel
// with the tool's first statement: one tools/call of a registered tool, in
// clean text, that does not wait.
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

// checkFailed answers a request whose token the database could not check:
// 503 when it cannot be reached, else 500.
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

// bearerToken returns the token of the Authorization header, and whether
// the header was sent at all.
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
