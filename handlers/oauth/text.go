package oauth

import (
	"encoding/json"
	"sort"
	"strings"
)

// nulField names the first JSON member holding a NUL ("" when none); the
// decoder already replaces invalid UTF-8.
func nulField(doc []byte) string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return ""
	}
	return findNUL(v, "")
}

func findNUL(v any, path string) string {
	switch t := v.(type) {
	case string:
		if strings.ContainsRune(t, 0) {
			if path == "" {
				return "value"
			}
			return path
		}
	case []any:
		for _, x := range t {
			if f := findNUL(x, path); f != "" {
				return f
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := k
			if path != "" {
				name = path + "." + k
			}
			if strings.ContainsRune(k, 0) {
				return strings.ReplaceAll(name, "\x00", "")
			}
			if f := findNUL(t[k], name); f != "" {
				return f
			}
		}
	}
	return ""
}
