package mcp

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// A plain call of a tool is answered here, byte for byte as the SDK
// would (TestDirectAnswersAsTheSDK compares both), because the SDK's
// per-request set-up is most of such a call's cost; anything unusual about
// the request goes to the SDK.

// plainTools are the tools where that gained at least 20 % calls/s at
// concurrency 8 (docs/performance.md, "Fast paths").
var plainTools = map[string]bool{"read_session_mail": true, "list_sessions": true, "poll_resource_events": true,
	"read_session_state": true, "set_status": true}

// plainVersions are the protocol versions the SDK accepts whose results
// carry no resultType and no server _meta.
var plainVersions = map[string]bool{"": true, "2024-11-05": true, "2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

type plainCall struct {
	tool *tool
	name string
	id   jsonrpc.ID
	args json.RawMessage // nil when absent
}

// plainCallOf returns a plain call of a registered tool by a token still
// valid now (the SDK's bearer check refuses one that expired since
// verifyToken).
func (h *Handler) plainCallOf(r *http.Request, ti *store.TokenInfo) (plainCall, bool) {
	m := requestFrom(r.Context()).plain
	if m == nil || !time.Now().Before(ti.ExpiresAt) {
		return plainCall{}, false
	}
	args := m.Params.Arguments
	if m.Method != "tools/call" || (args != nil && args[0] != '{') || m.initializes() {
		return plainCall{}, false
	}
	t, ok := h.registry[m.Params.Name]
	return plainCall{tool: t, name: m.Params.Name, id: m.id, args: args}, ok && plainTools[m.Params.Name]
}

// plainMessage returns the request's one message when nothing about the
// request could make the SDK answer it otherwise than by its method alone.
func (h *Handler) plainMessage(r *http.Request, req *rpcRequest) *message {
	if h.sdkOnly || req.batch || len(req.messages) != 1 {
		return nil
	}
	hd := r.Header
	if ct, _, err := mime.ParseMediaType(hd.Get("Content-Type")); err != nil || ct != "application/json" {
		return nil
	}
	if json, stream := accepts(hd.Values("Accept")); !json || !stream {
		return nil
	}
	if len(hd.Values("Last-Event-ID")) > 0 || len(hd.Values("Mcp-Protocol-Version")) > 1 || !plainVersions[hd.Get("Mcp-Protocol-Version")] {
		return nil
	}
	m := &req.messages[0]
	if !m.exact || string(m.version) != `"2.0"` || !plainID(m.ID) || m.idErr != nil {
		return nil
	}
	return m
}

// plainID reports whether the SDK keeps an id as it is: a string, or an
// integer of at most 15 digits (it holds numbers as float64).
func plainID(raw json.RawMessage) bool {
	switch {
	case len(raw) > 0 && raw[0] == '"':
		return true
	case len(raw) == 0 || len(raw) > 16:
		return false
	}
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, b := range digits {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

// accepts reads Accept as the SDK does.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// answerPlainCall writes what the SDK would: a Content of [] rather than
// null, and the headers of its JSON response.
func (h *Handler) answerPlainCall(w http.ResponseWriter, r *http.Request, ti *store.TokenInfo, pc plainCall) {
	ctx := r.Context()
	res, err := pc.tool.run(ctx, &caller{TokenInfo: *ti, check: deferredFrom(ctx)}, pc.args)
	var refused checkRefused
	if errors.As(err, &refused) {
		h.answerRefused(w, r, refused.err)
		return
	}
	var raw json.RawMessage
	if err == nil {
		if res.Content == nil {
			res.Content = []mcpsdk.Content{}
		}
		if raw, err = encodeResult(res); err != nil {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
	}
	msg, err := rpcResponse(pc.id, raw, err)
	if err != nil {
		h.log.Error("mcp: encode response", "tool", pc.name, "err", err)
		writeRPCError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, msgInternalErr)
		return
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	writeRPC(w, http.StatusOK, false, msg)
}

func (h *Handler) answerRefused(w http.ResponseWriter, r *http.Request, err error) {
	req := requestFrom(r.Context())
	switch {
	case errors.Is(err, store.ErrTokenRefused):
		h.refuseToken(w, req, true)
	case errors.Is(err, store.ErrScopeRefused):
		h.refuseScope(w, req)
	default:
		h.checkFailed(w, r, req, err)
	}
}
