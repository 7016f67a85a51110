package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rpcRequest is a POST to /mcp as parse decoded it, once, for every later
// link of the front: its messages, and the scope they need.
type rpcRequest struct {
	body     []byte
	messages []message // none when the body is not JSON-RPC the front can read; the SDK answers it
	batch    bool
	// scope is what the messages need of a token: "" when they may be
	// answered anonymously (no tools/call among them), store.ScopeWrite when
	// any call needs it.
	scope string
	// plain is the one message of a request plain enough for the front to
	// answer it itself (plainMessage), nil for any other.
	plain *message
	start time.Time // when the front began reading the request

	// tally is how its tool calls ended, for count (metrics.go).
	tally tally
}

// message is one JSON-RPC message of a body: what the front needs of it.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      map[string]any  `json:"_meta"`
		// The members of initialize's params.
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	} `json:"params"`

	// id is ID decoded; idErr says why it cannot be (it is absent, or of a
	// type JSON-RPC does not allow).
	id    jsonrpc.ID
	idErr error
	// exact: the body is this one message and its members are those of a
	// plain tools/call or initialize, each once, with no other (readExact);
	// version is then its jsonrpc member as sent, params its params (nil
	// when absent).
	exact   bool
	version []byte
	params  []byte
}

// requestKey carries the *rpcRequest parse decoded.
type requestKey struct{}

// requestFrom returns the request parse decoded, or nil (not a POST, or a
// context of no request).
func requestFrom(ctx context.Context) *rpcRequest {
	req, _ := ctx.Value(requestKey{}).(*rpcRequest)
	return req
}

// isNotification reports whether a message is a notification (no id).
func (m *message) isNotification() bool { return len(m.ID) == 0 || string(m.ID) == "null" }

// newProtocol reports whether a message speaks protocol 2026-07-28 or
// later, whose results carry resultType.
func (m *message) newProtocol() bool {
	v, _ := m.Params.Meta[mcpsdk.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}
