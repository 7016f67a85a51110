package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/store"
)

// maxJSONDepth bounds how deeply a request body may nest arrays and objects.
const maxJSONDepth = 64

// jsonTooDeep scans bytes without decoding (strings are skipped).
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

// checkArguments refuses arguments with invalid UTF-8 or a NUL, which the
// store could not keep, as an isError result naming the argument; only such
// a body is decoded argument by argument.
func (h *Handler) checkArguments(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := requestFrom(r.Context())
		if req == nil || req.scope == "" || req.cleanText() {
			next.ServeHTTP(w, r)
			return
		}
		for _, m := range req.messages {
			if field := badArgument(m.Params.Arguments); field != "" {
				text := fmt.Sprintf("Invalid arguments: %s: contains invalid UTF-8 or a NUL character", field)
				writeRPC(w, http.StatusOK, req.batch, resultForEach(req.messages, isErrorResult(text, nil))...)
				req.answeredAs(metrics.IsError)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (req *rpcRequest) cleanText() bool {
	return utf8.Valid(req.body) && !bytes.Contains(req.body, []byte(`\u0000`))
}

// badArgument names the first argument with invalid UTF-8 or a NUL, nested
// ones with dots.
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
