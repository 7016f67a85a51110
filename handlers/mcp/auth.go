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

// tokenInfoKey carries the verified *store.TokenInfo in the SDK's auth.TokenInfo.Extra.
const tokenInfoKey = "osfoundry"

const errorDescription = "Connect osFoundry to continue"

// challengeScopes is what every 401 asks for, whichever tool was called:
// some clients (the TypeScript SDK 1.x) refresh rather than re-authorize on
// a later 403, so a read-only first sign-in would stay read-only for good.
var challengeScopes = strings.Join(store.AllScopes, " ")

// verifiedToken hands the SDK what verifyToken already verified.
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

// ProtectedResourceMetadata serves the RFC 9728 metadata of <base>/mcp.
func (h *Handler) ProtectedResourceMetadata() http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               h.resource,
		AuthorizationServers:   []string{h.issuer},
		ScopesSupported:        store.AllScopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "osFoundry",
	})
}
