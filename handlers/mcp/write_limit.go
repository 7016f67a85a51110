package mcp

import (
	"encoding/json"
	"errors"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// errorResultOf is the isError result of err; a write past its bucket
// carries retry_after_seconds in structured content too, for the clients
// that read only that (Codex).
func errorResultOf(err error) (*mcpsdk.CallToolResult, marshaled) {
	res := errorResult(err)
	var wl *store.WriteLimited
	if !errors.As(err, &wl) {
		return res, nil
	}
	b, merr := json.Marshal(struct {
		Error             string `json:"error"`
		RetryAfterSeconds int    `json:"retry_after_seconds"`
	}{wl.Error(), wl.RetrySeconds()})
	if merr != nil {
		return res, nil
	}
	return res, b
}
