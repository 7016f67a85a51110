package mcp

import (
	"fmt"
	"net/http"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/metrics"
)

// challengeScope refuses an invalid token whatever the method, and a call
// without a valid token (401) or without the tool's scope (403).
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

func (h *Handler) refuseToken(w http.ResponseWriter, req *rpcRequest, sent bool) {
	params := []string{}
	if sent {
		params = append(params, `error="invalid_token"`)
	}
	params = append(params, fmt.Sprintf("resource_metadata=%q", h.metadataURL), fmt.Sprintf("scope=%q", challengeScopes),
		fmt.Sprintf("error_description=%q", errorDescription))
	h.refuse(w, req, http.StatusUnauthorized, "Bearer "+strings.Join(params, ", "), "Authentication required")
}

func (h *Handler) refuseScope(w http.ResponseWriter, req *rpcRequest) {
	hdr := fmt.Sprintf(`Bearer error="insufficient_scope", resource_metadata=%q, scope=%q, error_description=%q`,
		h.metadataURL, req.scope, errorDescription)
	h.refuse(w, req, http.StatusForbidden, hdr, "Insufficient scope: this tool needs "+req.scope)
}

// refuse writes the status and WWW-Authenticate, and also an isError result
// carrying the header in _meta, for clients that never read headers.
func (h *Handler) refuse(w http.ResponseWriter, req *rpcRequest, status int, header, text string) {
	w.Header().Set("WWW-Authenticate", header)
	w.Header().Set("Cache-Control", "no-store")
	writeRPC(w, status, req.batch, resultForEach(req.messages, isErrorResult(text, mcpsdk.Meta{"mcp/www_authenticate": []string{header}}))...)
	req.answeredAs(metrics.Refused)
}
