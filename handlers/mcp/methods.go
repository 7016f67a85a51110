package mcp

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// capabilities is what initialize advertises, and no more: tools without
// listChanged (the list is fixed while the server runs, and a stateless
// server has no stream to announce a change on) and logging, whose
// logging/setLevel is answered (the MCP Inspector sends it right after
// initialize when logging is advertised).
var capabilities = &mcpsdk.ServerCapabilities{
	Tools: &mcpsdk.ToolCapabilities{},
	//lint:ignore SA1019 deprecated in a protocol version the clients do not speak yet; the Inspector still uses it
	Logging: &mcpsdk.LoggingCapabilities{},
}

// implemented reports whether the server answers a request method. Only
// tools/call needs a token; the others answer anyone who presents no token
// or a valid one (a bad token gets 401 whatever the method). Every other
// method gets JSON-RPC -32601 (answerUnimplemented).
func implemented(method string) bool {
	switch method {
	case "initialize", "server/discover", "ping", "tools/list", "tools/call":
		return true
	case "logging/setLevel":
		//lint:ignore SA1019 see capabilities
		return capabilities.Logging != nil
	}
	return false
}

// handledNotifications are the notifications the SDK acts on; any other is
// accepted and ignored (a notification never gets an answer).
var handledNotifications = map[string]bool{
	"notifications/initialized":        true,
	"notifications/cancelled":          true,
	"notifications/progress":           true,
	"notifications/roots/list_changed": true,
}

// unanswered reports whether the server does not act on a message: a
// request for a method it does not implement, or a notification the SDK
// does not handle. JSON-RPC responses (no method) go to the SDK.
func unanswered(m *message) bool {
	switch {
	case m.Method == "":
		return false
	case m.isNotification():
		return !handledNotifications[m.Method]
	}
	return !implemented(m.Method)
}

func methodNotFound(method string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", method)}
}

// answerUnimplemented answers a lone message the server does not act on,
// sent without a token or with a valid one, so that a client probing for
// resources or prompts never starts a sign-in: a notification with 202 Accepted and no body, a request
// with JSON-RPC -32601 (HTTP 404 for protocol 2026-07-28 and later, as that
// revision requires). In a batch, onlyImplemented answers them.
func answerUnimplemented(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := requestFrom(r.Context())
		if req == nil || req.batch || len(req.messages) != 1 || !unanswered(&req.messages[0]) {
			next.ServeHTTP(w, r)
			return
		}
		m := &req.messages[0]
		if m.isNotification() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if m.idErr != nil {
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "invalid request id")
			return
		}
		msg, err := rpcResponse(m.id, nil, methodNotFound(m.Method))
		if err != nil {
			writeRPCError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, msgInternalErr)
			return
		}
		status := http.StatusOK
		if m.newProtocol() {
			status = http.StatusNotFound
		}
		writeRPC(w, status, false, msg)
	})
}

// onlyImplemented refuses, inside the SDK, the methods the SDK knows but this
// server does not implement (resources, prompts, completion).
// answerUnimplemented answers a lone such request before the SDK sees it;
// this covers the messages of a JSON-RPC batch.
func onlyImplemented(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		if !implemented(method) && !handledNotifications[method] {
			return nil, methodNotFound(method)
		}
		return next(ctx, method, req)
	}
}
