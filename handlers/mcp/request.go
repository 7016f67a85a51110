package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rpcRequest is a POST to /mcp as parse decoded it, once, for every later link.
type rpcRequest struct {
	body     []byte
	messages []message // none when the body is not JSON-RPC the front can read; the SDK answers it
	batch    bool
	scope    string   // "" when no tools/call needs a token
	plain    *message // the one message the front may answer itself (plainMessage)
	start    time.Time
	tally    tally
}

// message is what the front needs of one JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name            string          `json:"name"`
		Arguments       json.RawMessage `json:"arguments"`
		Meta            map[string]any  `json:"_meta"`
		ProtocolVersion string          `json:"protocolVersion"` // initialize's
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	} `json:"params"`

	id    jsonrpc.ID
	idErr error // absent, or of a type JSON-RPC does not allow
	// exact: readExact read it, and version and params are its members as sent.
	exact   bool
	version []byte
	params  []byte
}

type requestKey struct{}

// requestFrom returns the request parse decoded, or nil (not a POST).
func requestFrom(ctx context.Context) *rpcRequest {
	req, _ := ctx.Value(requestKey{}).(*rpcRequest)
	return req
}

func (m *message) isNotification() bool { return len(m.ID) == 0 || string(m.ID) == "null" }

// newProtocol reports whether a message speaks protocol 2026-07-28 or later.
func (m *message) newProtocol() bool {
	v, _ := m.Params.Meta[mcpsdk.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}
