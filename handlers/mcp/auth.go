package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/store"
)

// tokenInfoKey is where the verified *store.TokenInfo travels inside the
// SDK's auth.TokenInfo.Extra.
const tokenInfoKey = "osfoundry"

// errorDescription is what every refusal tells the person behind the client.
const errorDescription = "Connect osFoundry to continue"

// challengeScopes is the scope every 401 asks for, whichever tool was called:
// clients request exactly the challenged scope, and some (the TypeScript SDK
// 1.x) refresh instead of re-authorizing on a later 403, so a read-only first
// sign-in would leave them read-only for good. The owner can still untick
// write on the consent page. A 403 insufficient_scope names the tool's own
// scope instead.
var challengeScopes = strings.Join(store.AllScopes, " ")

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
// refuses those). A plain call (plainCallOf) of a token this replica has
// checked before, whose scopes held the call's, is verified by a check that
// travels with the call's first statement (store.DeferTokenCheck): the
// token is still checked in the database, in the call's own round trip, and
// answerPlainCall refuses the call as challengeScope would when the check
// does. (A call checkArguments would refuse is checked first, as any other.) A database that fails the check answers 503 (unreachable) or 500.
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
			if cached, ok := h.store.CachedToken(token, h.resource); ok {
				if pc, ok := h.plainCallOf(r, cached); ok && cached.HasScope(pc.tool.scope) && req.cleanText() {
					var check *store.TokenCheck
					ctx, check = h.store.DeferTokenCheck(ctx, token, h.resource, pc.tool.scope, !pc.tool.ownsUnread)
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

// checkFailed answers a request whose token the database could not check:
// 503 when it cannot be reached, else 500.
func (h *Handler) checkFailed(w http.ResponseWriter, r *http.Request, req *rpcRequest, err error) {
	if store.IsUnavailable(err) {
		h.log.WarnContext(r.Context(), "mcp: verify token: database unavailable", "err", err)
		w.Header().Set("Retry-After", "5")
		writeRPC(w, http.StatusServiceUnavailable, false, requestError(jsonrpc.CodeInternalError, msgUnavailable))
	} else {
		h.log.ErrorContext(r.Context(), "mcp: verify token", "err", err)
		writeRPC(w, http.StatusInternalServerError, false, requestError(jsonrpc.CodeInternalError, msgInternalErr))
	}
	h.observeAnswered(req, metrics.Failed)
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

// challengeScope refuses a request that presents a token verifyToken found
// invalid (expired, revoked, unknown or for another resource), whatever its
// methods, and the calls without a valid token: 401, asking for every scope,
// error="invalid_token" when a token was sent. Clients re-authenticate on it
// (RFC 6750 §3.1). A call whose token lacks the scope it needs gets 403
// insufficient_scope, naming that scope. A request that presents no token
// and needs none passes.
func (h *Handler) challengeScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := requestFrom(r.Context())
		_, sent := bearerToken(r)
		if req == nil || (!sent && req.scope == "") {
			next.ServeHTTP(w, r)
			return
		}
		switch ti := verifiedFrom(r.Context()); {
		case ti == nil:
			h.refuseToken(w, req, sent)
		case req.scope != "" && !ti.HasScope(req.scope):
			h.refuseScope(w, req)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// refuseToken refuses a request without a valid token: 401, asking for
// every scope, error="invalid_token" when a token was sent.
func (h *Handler) refuseToken(w http.ResponseWriter, req *rpcRequest, sent bool) {
	params := []string{}
	if sent {
		params = append(params, `error="invalid_token"`)
	}
	params = append(params, fmt.Sprintf("resource_metadata=%q", h.metadataURL), fmt.Sprintf("scope=%q", challengeScopes),
		fmt.Sprintf("error_description=%q", errorDescription))
	h.refuse(w, req, http.StatusUnauthorized, "Bearer "+strings.Join(params, ", "), "Authentication required")
}

// refuseScope refuses a call whose token lacks the scope it needs: 403
// insufficient_scope, naming that scope.
func (h *Handler) refuseScope(w http.ResponseWriter, req *rpcRequest) {
	hdr := fmt.Sprintf(`Bearer error="insufficient_scope", resource_metadata=%q, scope=%q, error_description=%q`,
		h.metadataURL, req.scope, errorDescription)
	h.refuse(w, req, http.StatusForbidden, hdr, "Insufficient scope: this tool needs "+req.scope)
}

// refuse writes a refusal two ways at once: the status with its
// WWW-Authenticate header, and for each request a JSON-RPC result (not an
// error) with isError, the text, and the header in _meta for clients that
// never read headers.
func (h *Handler) refuse(w http.ResponseWriter, req *rpcRequest, status int, header, text string) {
	w.Header().Set("WWW-Authenticate", header)
	w.Header().Set("Cache-Control", "no-store")
	writeRPC(w, status, req.batch, resultForEach(req.messages, isErrorResult(text, mcpsdk.Meta{"mcp/www_authenticate": []string{header}}))...)
	h.observeAnswered(req, metrics.Refused)
}

// verifiedToken is the auth.TokenVerifier behind auth.RequireBearerToken:
// verifyToken already verified the token, so it only hands that result to
// the SDK, where tools read it from req.Extra.TokenInfo.
func verifiedToken(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	ti := verifiedFrom(ctx)
	if ti == nil {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{
		Scopes:     ti.Scopes,
		Expiration: ti.ExpiresAt,
		UserID:     strconv.FormatInt(ti.ConnectionID, 10),
		Extra:      map[string]any{tokenInfoKey: ti},
	}, nil
}

// ProtectedResourceMetadata serves RFC 9728 metadata at both
// /.well-known/oauth-protected-resource/mcp and
// /.well-known/oauth-protected-resource: the resource is <base>/mcp and the
// authorization server is this app's issuer (its origin).
func (h *Handler) ProtectedResourceMetadata() http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               h.resource,
		AuthorizationServers:   []string{h.issuer},
		ScopesSupported:        store.AllScopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "osFoundry",
	})
}
