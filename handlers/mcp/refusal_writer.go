package mcp

import (
	"net/http"

	"github.com/osfoundry/osfoundry/store"
)

// refusalWriter carries the SDK's answer to a call whose token's check
// travels with the tool's first statement: when that check refused (or
// failed), which is known only once the tool ran, the front's refusal
// (answerRefused) goes out instead of what the SDK wrote.
type refusalWriter struct {
	http.ResponseWriter
	check    *store.TokenCheck
	refuse   func(w http.ResponseWriter, err error)
	header   http.Header // as the front set it, before the SDK
	started  bool
	replaced bool
}

func (rw *refusalWriter) WriteHeader(status int) {
	if rw.started {
		return
	}
	rw.started = true
	if err := rw.check.Refused(); err != nil {
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

// newRefusalWriter carries w for a call whose check is check.
func newRefusalWriter(w http.ResponseWriter, check *store.TokenCheck, refuse func(http.ResponseWriter, error)) *refusalWriter {
	return &refusalWriter{ResponseWriter: w, check: check, refuse: refuse, header: w.Header().Clone()}
}

// Unwrap lets http.ResponseController reach the connection.
func (rw *refusalWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }
