package mcp

import (
	"context"
	"net/http"

	"github.com/osfoundry/osfoundry/store"
)

// refusalWriter carries the SDK's answer to a call whose token's check
// travels with the tool's first statement: when that check refused (or
// failed), which is known only once the tool ran, the front's refusal
// (answerRefused) goes out instead of what the SDK wrote. A call the SDK
// answered without running its tool (its params unreadable) has its check
// run then, alone: no answer goes out unchecked.
type refusalWriter struct {
	http.ResponseWriter
	ctx      context.Context
	check    *store.TokenCheck
	refuse   func(w http.ResponseWriter, err error)
	header   http.Header // as the front set it, before the SDK
	started  bool
	replaced bool
}

// newRefusalWriter carries w for a call of r whose check is check.
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
