package mcp

import (
	"context"
	"net/http"

	"github.com/osfoundry/osfoundry/store"
)

// refusalWriter replaces the SDK's answer with the front's refusal when the
// token's check, known only once the tool ran, refused; a call the SDK
// answered without running its tool has its check run then, so that no
// answer goes out unchecked.
type refusalWriter struct {
	http.ResponseWriter
	ctx      context.Context
	check    *store.TokenCheck
	refuse   func(w http.ResponseWriter, err error)
	header   http.Header // as the front set it, before the SDK
	started  bool
	replaced bool
}

func newRefusalWriter(w http.ResponseWriter, r *http.Request, check *store.TokenCheck, refuse func(http.ResponseWriter, error)) *refusalWriter {
	return &refusalWriter{ResponseWriter: w, ctx: r.Context(), check: check, refuse: refuse, header: w.Header().Clone()}
}

func (rw *refusalWriter) WriteHeader(status int) {
	if rw.started {
		return
	}
	rw.started = true
	if _, err := rw.check.Result(rw.ctx); err != nil {
		rw.replaced = true
		hd := rw.ResponseWriter.Header()
		clear(hd)
		for k, v := range rw.header {
			hd[k] = v
		}
		rw.refuse(rw.ResponseWriter, err)
		return
	}
	rw.ResponseWriter.WriteHeader(status)
}

func (rw *refusalWriter) Write(b []byte) (int, error) {
	rw.WriteHeader(http.StatusOK)
	if rw.replaced {
		return len(b), nil
	}
	return rw.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (rw *refusalWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }
