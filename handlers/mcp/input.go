package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxJSONDepth bounds how deeply a request body may nest arrays and objects.
const maxJSONDepth = 64

// jsonTooDeep reports whether body nests arrays/objects deeper than limit,
// scanning bytes without decoding (strings are skipped).
func jsonTooDeep(body []byte, limit int) bool {
	depth := 0
	inString, escaped := false, false
	for _, b := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			if depth > limit {
				return true
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return false
}

// badArgument returns the name of the first tool argument whose text holds
// invalid UTF-8 or a NUL character ("" when all are clean). Nested values are
// named with dots.
func badArgument(args json.RawMessage) string {
	var m map[string]json.RawMessage
	if len(args) == 0 || json.Unmarshal(args, &m) != nil {
		return ""
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !utf8.ValidString(k) || strings.ContainsRune(k, 0) {
			return strings.ToValidUTF8(strings.ReplaceAll(k, "\x00", ""), "?")
		}
		v := m[k]
		if !utf8.Valid(v) {
			return k
		}
		switch t := bytes.TrimLeft(v, " \t\r\n"); {
		case len(t) > 0 && t[0] == '"':
			var s string
			if json.Unmarshal(v, &s) == nil && strings.ContainsRune(s, 0) {
				return k
			}
		case len(t) > 0 && t[0] == '{':
			if sub := badArgument(v); sub != "" {
				return k + "." + sub
			}
		}
	}
	return ""
}

// writeToolError answers each call of the body with an isError tool result
// carrying text (HTTP 200): a problem the agent can fix.
func writeToolError(w http.ResponseWriter, text string, calls []call, batch bool) {
	w.Header().Set("Content-Type", "application/json")
	var out []json.RawMessage
	for _, c := range calls {
		if len(c.ID) == 0 || string(c.ID) == "null" {
			continue
		}
		id, err := decodeID(c.ID)
		if err != nil {
			continue
		}
		res := &refusalResult{CallToolResult: mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}}
		if newProtocol(c) {
			res.ResultType = "complete"
		}
		raw, err := json.Marshal(res)
		if err != nil {
			continue
		}
		if msg, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: raw}); err == nil {
			out = append(out, msg)
		}
	}
	if batch {
		b, _ := json.Marshal(out)
		w.Write(b)
		return
	}
	if len(out) == 1 {
		w.Write(out[0])
	}
}

// writeRPCError answers with a JSON-RPC error object and an HTTP status, for
// requests that are not well-formed enough to reach a tool.
func writeRPCError(w http.ResponseWriter, status int, code int64, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": message}})
	w.Write(b)
}
