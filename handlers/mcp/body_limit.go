package mcp

import (
	"net/http"

	"github.com/osfoundry/osfoundry/handlers/inbound"
)

// limitBody bounds the body as the app bounds every route's; parse answers 413.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, inbound.MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}
