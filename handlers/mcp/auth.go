package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/osfoundry/osfoundry/handlers/inbound"
	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/store"
)

// maxBodyBytes caps a JSON-RPC request body.
const maxBodyBytes = 1 << 20

// tokenInfoKey is where the verified *store.TokenInfo travels inside the
// SDK's auth.TokenInfo.Extra.
const tokenInfoKey = "osfoundry"

// errorDescription is what every refusal tells the person behind the client.
const errorDescription = "Connect osFoundry to continue"

// challengeScope is the scope every 401 asks for, whichever tool was called:
// clients request exactly the challenged scope, and some (the TypeScript SDK
// 1.x) refresh instead of re-authorizing on a later 403, so a read-only first
// sign-in would leave them read-only for good. The owner can still untick
// write on the consent page. A 403 insufficient_scope names the tool's own
// scope instead.
var challengeScope = strings.Join(store.AllScopes, " ")

// ServeHTTP serves /mcp. It refuses foreign Host and Origin headers, answers
// CORS, answers -32601 to a method the server does not implement, lets every
// other method but tools/call through to the SDK without a token, and
// verifies the bearer token of a tools/call once: a bad or missing token gets
// the double refusal (401 + WWW-Authenticate, and an isError result carrying
// the same header in _meta), a token without the tool's scope gets 403.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if !h.allowedHost(r.Host) {
		http.Error(w, "Forbidden: unknown Host", http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !h.allowedOrigin(origin) {
			http.Error(w, "Forbidden: unknown Origin", http.StatusForbidden)
			return
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Add("Vary", "Origin")
		hd.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version")
		if r.Method == http.MethodOptions {
			hd.Set("Access-Control-Allow-Methods", "POST, GET, DELETE, OPTIONS")
			hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID")
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if r.URL.Query().Has("access_token") {
		writeRPCError(w, http.StatusBadRequest, -32600, "access_token in the URL is not accepted: send it in the Authorization header (Bearer)")
		return
	}
	if r.Method != http.MethodPost {
		h.sdk.ServeHTTP(w, r)
		return
	}

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", maxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read request body", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if jsonTooDeep(body, maxJSONDepth) {
		writeRPCError(w, http.StatusBadRequest, -32600, fmt.Sprintf("request JSON is nested deeper than %d levels", maxJSONDepth))
		return
	}

	calls, batch := peekCalls(body)
	if !batch && len(calls) == 1 && unanswered(calls[0]) {
		writeUnanswered(w, calls[0])
		return
	}
	scope := ""
	for _, c := range calls {
		if s := h.requiredScope(c); s != "" && (scope == "" || s == store.ScopeWrite) {
			scope = s
		}
	}
	if scope == "" {
		h.sdk.ServeHTTP(w, r)
		return
	}

	token, sent := bearerToken(r)
	var ti *store.TokenInfo
	if sent {
		ti, err = h.store.UseAccessToken(r.Context(), token, h.resource)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			if store.IsUnavailable(err) {
				h.log.WarnContext(r.Context(), "mcp: verify token: database unavailable", "err", err)
				w.Header().Set("Retry-After", "5")
				writeRPCError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, msgUnavailable)
				h.observeAnswered(calls, metrics.Failed, start)
				return
			}
			h.log.ErrorContext(r.Context(), "mcp: verify token", "err", err)
			writeRPCError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, msgInternalErr)
			h.observeAnswered(calls, metrics.Failed, start)
			return
		}
	}
	switch {
	case ti == nil:
		params := []string{}
		if sent {
			params = append(params, `error="invalid_token"`)
		}
		params = append(params, fmt.Sprintf("resource_metadata=%q", h.metadataURL), fmt.Sprintf("scope=%q", challengeScope),
			fmt.Sprintf("error_description=%q", errorDescription))
		writeRefusal(w, http.StatusUnauthorized, "Bearer "+strings.Join(params, ", "), "Authentication required", calls, batch)
		h.observeAnswered(calls, metrics.Refused, start)
		return
	case !ti.HasScope(scope):
		hdr := fmt.Sprintf(`Bearer error="insufficient_scope", resource_metadata=%q, scope=%q, error_description=%q`,
			h.metadataURL, scope, errorDescription)
		writeRefusal(w, http.StatusForbidden, hdr, "Insufficient scope: this tool needs "+scope, calls, batch)
		h.observeAnswered(calls, metrics.Refused, start)
		return
	}

	// Only a body with invalid UTF-8 or an escaped NUL can hold a bad argument;
	// the usual body skips the per-argument decoding.
	if !utf8.Valid(body) || bytes.Contains(body, []byte(`\u0000`)) {
		for _, c := range calls {
			if field := badArgument(c.Params.Arguments); field != "" {
				writeToolError(w, fmt.Sprintf("Invalid arguments: %s: contains invalid UTF-8 or a NUL character", field), calls, batch)
				h.observeAnswered(calls, metrics.IsError, start)
				return
			}
		}
	}
	// The SDK's bearer check refuses a token that expired since it was
	// verified; only a token still valid now is answered directly.
	if !batch && !h.sdkOnly && time.Now().Before(ti.ExpiresAt) {
		if dc, ok := h.direct(r, body); ok {
			h.answerDirectly(w, r.Context(), ti, dc)
			return
		}
	}
	ctx := context.WithValue(r.Context(), verifiedKey{}, ti)
	h.authed.ServeHTTP(w, r.WithContext(ctx))
}

// verifiedKey carries the token info ServeHTTP verified to verifiedToken.
type verifiedKey struct{}

// verifiedToken is the auth.TokenVerifier behind auth.RequireBearerToken: the
// token was already verified once by ServeHTTP, so it only hands that result
// to the SDK, where tools read it from req.Extra.TokenInfo.
func verifiedToken(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	ti, ok := ctx.Value(verifiedKey{}).(*store.TokenInfo)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{
		Scopes:     ti.Scopes,
		Expiration: ti.ExpiresAt,
		UserID:     strconv.FormatInt(ti.ConnectionID, 10),
		Extra:      map[string]any{tokenInfoKey: ti},
	}, nil
}

// call is what the wrapper needs of one JSON-RPC message.
type call struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      map[string]any  `json:"_meta"`
	} `json:"params"`
}

// peekCalls decodes the messages of a body (one object or a batch array).
// An undecodable body yields nothing, and the SDK answers it.
func peekCalls(body []byte) (calls []call, batch bool) {
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &calls) != nil {
			return nil, true
		}
		return calls, true
	}
	var c call
	if json.Unmarshal(body, &c) != nil {
		return nil, false
	}
	return []call{c}, false
}

// requiredScope returns the scope a message needs, or "" when it may be
// answered anonymously: only tools/call needs a token, with the tool's scope
// (osfoundry:read for an unknown tool, which the SDK then refuses).
func (h *Handler) requiredScope(c call) string {
	if c.Method != "tools/call" {
		return ""
	}
	if t, ok := h.registry[c.Params.Name]; ok {
		return t.scope
	}
	return store.ScopeRead
}

func bearerToken(r *http.Request) (string, bool) {
	v := r.Header.Get("Authorization")
	if v == "" {
		return "", false
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return v, true // sent, but not a bearer token: refused as invalid
	}
	return strings.TrimSpace(token), true
}

// writeRefusal writes the refusal two ways at once: the status with its
// WWW-Authenticate header, and for each request a JSON-RPC result (not an
// error) with isError, the text, and the header in _meta for clients that
// never read headers.
func writeRefusal(w http.ResponseWriter, status int, header, text string, calls []call, batch bool) {
	w.Header().Set("WWW-Authenticate", header)
	w.Header().Set("Cache-Control", "no-store")
	writeResults(w, status, &mcpsdk.CallToolResult{
		IsError: true,
		Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}},
		Meta:    mcpsdk.Meta{"mcp/www_authenticate": []string{header}},
	}, calls, batch)
}

// writeResults answers every request among calls with the same tool result
// (notifications get none), as one message or a batch array.
func writeResults(w http.ResponseWriter, status int, result *mcpsdk.CallToolResult, calls []call, batch bool) {
	w.Header().Set("Content-Type", "application/json")
	var out []json.RawMessage
	for _, c := range calls {
		if c.isNotification() {
			continue // a notification gets no response
		}
		id, err := decodeID(c.ID)
		if err != nil {
			continue
		}
		res := &refusalResult{CallToolResult: *result}
		if newProtocol(c) {
			res.ResultType = "complete"
		}
		raw, err := json.Marshal(res)
		if err != nil {
			continue
		}
		msg, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: raw})
		if err != nil {
			continue
		}
		out = append(out, msg)
	}
	w.WriteHeader(status)
	switch {
	case batch:
		b, _ := json.Marshal(out)
		w.Write(b)
	case len(out) == 1:
		w.Write(out[0])
	}
}

// refusalResult is a CallToolResult with the resultType newer protocol
// versions expect on every result.
type refusalResult struct {
	mcpsdk.CallToolResult
	ResultType string
}

func (r *refusalResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(&r.CallToolResult)
	if err != nil || r.ResultType == "" {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["resultType"], _ = json.Marshal(r.ResultType)
	return json.Marshal(m)
}

func decodeID(raw json.RawMessage) (jsonrpc.ID, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return jsonrpc.ID{}, err
	}
	return jsonrpc.MakeID(v)
}

// newProtocol reports whether a request speaks protocol 2026-07-28 or later,
// whose results carry resultType.
func newProtocol(c call) bool {
	v, _ := c.Params.Meta[mcpsdk.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}

// allowedHost accepts the configured public host and loopback hosts (any
// port): the DNS-rebinding guard.
func (h *Handler) allowedHost(host string) bool {
	if strings.EqualFold(host, h.publicHost) {
		return true
	}
	return inbound.IsLoopbackHost(host)
}

// allowedOrigin accepts the configured public origin and loopback origins.
func (h *Handler) allowedOrigin(origin string) bool {
	if strings.EqualFold(origin, h.issuer) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" {
		return false
	}
	return inbound.IsLoopbackHost(u.Host)
}

// ProtectedResourceMetadata serves RFC 9728 metadata at both
// /.well-known/oauth-protected-resource/mcp and
// /.well-known/oauth-protected-resource: the resource is <base>/mcp and the
// authorization server is this app's issuer (its origin).
func (h *Handler) ProtectedResourceMetadata() http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               h.resource,
		AuthorizationServers:   []string{h.issuer},
		ScopesSupported:        store.AllScopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "osFoundry",
	})
}
