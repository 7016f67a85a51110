package mcp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/osfoundry/osfoundry/handlers/inbound"
)

// checkHostAndOrigin refuses a request whose Host, or Origin when it sends
// one, is neither the configured public origin nor loopback: the
// DNS-rebinding guard.
func (h *Handler) checkHostAndOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.allowedHost(r.Host) {
			writeRPCError(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "Forbidden: unknown Host")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !h.allowedOrigin(origin) {
			writeRPCError(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "Forbidden: unknown Origin")
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
