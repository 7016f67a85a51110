package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The answers that depend only on the method and protocol version
// (tools/list, ping, initialize) are the SDK's own, built once at start and
// sent again with the request's id; TestDirectAnswersAsTheSDK compares both.

type builtAnswer struct {
	status int
	header http.Header
	result json.RawMessage
}

// builtKey is a method and the protocol version of the request (for
// initialize, the one its params ask for).
type builtKey struct{ method, version string }

const builtID = `1`

// buildAnswers panics when an answer is not of the shape rpcResponse
// writes: the direct answers would differ from the SDK's.
func (h *Handler) buildAnswers() map[builtKey]builtAnswer {
	out := map[builtKey]builtAnswer{}
	build := func(k builtKey, header, body string) {
		req := httptest.NewRequest(http.MethodPost, h.resource, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if header != "" {
			req.Header.Set("Mcp-Protocol-Version", header)
		}
		rec := httptest.NewRecorder()
		h.sdk.ServeHTTP(rec, req)
		prefix := []byte(`{"jsonrpc":"2.0","id":` + builtID + `,"result":`)
		b := bytes.TrimRight(rec.Body.Bytes(), "\n")
		if rec.Code != http.StatusOK || !bytes.HasPrefix(b, prefix) || !bytes.HasSuffix(b, []byte("}")) {
			panic(fmt.Sprintf("mcp: the SDK's answer to %s (%s) cannot be kept: %d %s", k.method, k.version, rec.Code, b))
		}
		hd := maps.Clone(rec.Header())
		hd.Del("Content-Length")
		out[k] = builtAnswer{status: rec.Code, header: hd, result: bytes.Clone(b[len(prefix) : len(b)-1])}
	}
	for v := range plainVersions {
		for _, method := range []string{"tools/list", "ping"} {
			build(builtKey{method, v}, v, `{"jsonrpc":"2.0","id":`+builtID+`,"method":"`+method+`"}`)
		}
		if v != "" {
			build(builtKey{"initialize", v}, "", `{"jsonrpc":"2.0","id":`+builtID+`,"method":"initialize","params":{"protocolVersion":"`+v+
				`","capabilities":{},"clientInfo":{"name":"osfoundry","version":"1"}}}`)
		}
	}
	return out
}

// builtAnswerOf returns the built answer to a request whose params are those
// it was built from, or false.
func (h *Handler) builtAnswerOf(r *http.Request) (*message, builtAnswer, bool) {
	req := requestFrom(r.Context())
	if req == nil || req.plain == nil {
		return nil, builtAnswer{}, false
	}
	m := req.plain
	if m.Params.Name != "" || m.Params.Arguments != nil {
		return nil, builtAnswer{}, false
	}
	var k builtKey
	switch m.Method {
	case "tools/list", "ping":
		if m.initializes() || !emptyObject(m.params) {
			return nil, builtAnswer{}, false
		}
		k = builtKey{m.Method, r.Header.Get("Mcp-Protocol-Version")}
	case "initialize":
		var p mcpsdk.InitializeParams
		if r.Header.Get("Mcp-Protocol-Version") != "" || m.Params.ProtocolVersion == "" || !isObject(m.Params.Capabilities) ||
			!isObject(m.Params.ClientInfo) || sdkUnmarshal(m.params, &p) != nil {
			return nil, builtAnswer{}, false
		}
		k = builtKey{m.Method, m.Params.ProtocolVersion}
	default:
		return nil, builtAnswer{}, false
	}
	a, ok := h.built[k]
	return m, a, ok
}

func (h *Handler) answerBuilt(w http.ResponseWriter, m *message, a builtAnswer) {
	msg, err := rpcResponse(m.id, a.result, nil)
	if err != nil {
		writeRPCError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, msgInternalErr)
		return
	}
	hd := w.Header()
	for k, v := range a.header {
		hd[k] = slices.Clone(v)
	}
	writeRPC(w, a.status, false, msg)
}

func (m *message) initializes() bool {
	return m.Params.ProtocolVersion != "" || m.Params.Capabilities != nil || m.Params.ClientInfo != nil
}

func emptyObject(raw []byte) bool {
	if raw == nil {
		return true
	}
	s := scanner{b: raw}
	return s.object(func(_, _ []byte) bool { return false }) && s.end()
}

func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }
