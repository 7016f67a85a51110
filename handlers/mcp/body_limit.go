package mcp

import "net/http"

// maxBodyBytes caps a request body, in the front and in the SDK's handler.
const maxBodyBytes = 1 << 20

// limitBody bounds what can be read of the body to maxBodyBytes; parse
// answers 413 to a longer one.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}
