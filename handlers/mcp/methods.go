package mcp

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// capabilities: tools without listChanged (a stateless server has no stream
// to announce a change on), and logging, as the MCP Inspector sends
// logging/setLevel right after initialize.
var capabilities = &mcpsdk.ServerCapabilities{
	Tools: &mcpsdk.ToolCapabilities{},
	//lint:ignore SA1019 deprecated in a protocol version the clients do not speak yet; the Inspector still uses it
	Logging: &mcpsdk.LoggingCapabilities{},
}

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

// handledNotifications are those the SDK acts on; any other is ignored.
var handledNotifications = map[string]bool{
	"notifications/initialized":        true,
	"notifications/cancelled":          true,
	"notifications/progress":           true,
	"notifications/roots/list_changed": true,
}

// unanswered: a JSON-RPC response (no method) goes to the SDK.
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

// answerUnimplemented answers a lone message the server does not act on, so
// that a client probing for resources or prompts never starts a sign-in:
// 202 for a notification, -32601 for a request (HTTP 404 from protocol
// 2026-07-28 on, as it requires).
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

// onlyImplemented refuses, inside the SDK, the methods of a batch that the
// SDK knows and this server does not implement.
func onlyImplemented(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		if !implemented(method) && !handledNotifications[method] {
			return nil, methodNotFound(method)
		}
		return next(ctx, method, req)
	}
}
