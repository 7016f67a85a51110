package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
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
		if !store.CleanText(k) {
			return strings.ToValidUTF8(strings.ReplaceAll(k, "\x00", ""), "?")
		}
		v := m[k]
		if !utf8.Valid(v) {
			return k
		}
		switch t := bytes.TrimLeft(v, " \t\r\n"); {
		case len(t) > 0 && t[0] == '"':
			var s string
			if json.Unmarshal(v, &s) == nil && !store.CleanText(s) {
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
	writeResults(w, http.StatusOK, &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}, calls, batch)
}

// writeRPCError answers with a JSON-RPC error object and an HTTP status, for
// requests that are not well-formed enough to reach a tool.
func writeRPCError(w http.ResponseWriter, status int, code int64, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": message}})
	w.Write(b)
}
