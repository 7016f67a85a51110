package mcp

import (
	"encoding/json"
	"errors"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// A write past its connection's bucket (store.WriteLimited: notes, replies
// and questions, whether sent alone or in a batch) is refused as an isError
// result whose structured content says when to try again, for the clients
// that read only that (Codex): {"error": …, "retry_after_seconds": n}.

// errorResultOf is the isError result of err, with the structured content
// of a refusal past the write limit (nil for any other).
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
