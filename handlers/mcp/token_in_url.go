package mcp

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// refuseTokenInURL refuses a token sent in the query string, where logs and
// referrers would keep it: a token goes in the Authorization header.
func refuseTokenInURL(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("access_token") {
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
				"access_token in the URL is not accepted: send it in the Authorization header (Bearer)")
			return
		}
		next.ServeHTTP(w, r)
	})
}
