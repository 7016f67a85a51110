package mcp

import (
	"net/http"

	"github.com/osfoundry/osfoundry/handlers/inbound"
)

// limitBody bounds what can be read of the body to inbound.MaxBodyBytes, as
// the app bounds every route's; parse answers 413 to a longer one.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, inbound.MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}
