package mcp

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

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
