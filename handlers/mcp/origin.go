package mcp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/osfoundry/osfoundry/handlers/inbound"
)

// checkOrigin refuses an Origin that is neither the public origin nor
// loopback: with the app's Host check, the DNS-rebinding guard.
func (h *Handler) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !h.allowedOrigin(origin) {
			writeRPCError(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "Forbidden: unknown Origin")
			return
		}
		next.ServeHTTP(w, r)
	})
}

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
