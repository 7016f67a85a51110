package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// repeatedMember returns the first name of an object in doc that an earlier
// member already has (a), exactly or under Unicode case folding as
// encoding/json matches names (b); a small object's names are compared
// without allocating.
func repeatedMember(doc []byte) (a, b string) {
	type level struct {
		object bool
		names  [][]byte          // the names so far, unescaped, while few
		folded map[string][]byte // by foldName, once many
	}
	var stack []level
	wantName := false
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '{':
			stack = append(stack, level{object: true})
			wantName = true
		case '[':
			stack = append(stack, level{})
		case '}', ']':
			stack = stack[:len(stack)-1]
			wantName = false
		case ',':
			wantName = len(stack) > 0 && stack[len(stack)-1].object
		case '"':
			start := i
			escaped := false
			for i++; doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					escaped = true
					i++
				}
			}
			if !wantName {
				continue
			}
			wantName = false
			name := doc[start+1 : i]
			if escaped {
				var s string
				json.Unmarshal(doc[start:i+1], &s)
				name = []byte(s)
			}
			top := &stack[len(stack)-1]
			if top.folded == nil {
				for _, prev := range top.names {
					if bytes.EqualFold(prev, name) {
						return string(prev), string(name)
					}
				}
				if len(top.names) < 16 {
					top.names = append(top.names, name)
					continue
				}
				top.folded = map[string][]byte{}
				for _, prev := range top.names {
					top.folded[foldName(string(prev))] = prev
				}
			}
			key := foldName(string(name))
			if prev, ok := top.folded[key]; ok {
				return string(prev), string(name)
			}
			top.folded[key] = name
		}
	}
	return "", ""
}

// foldName spells alike every name that bytes.EqualFold finds equal: each
// character becomes the smallest of its folding orbit (K, k, Kelvin sign).
func foldName(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s)
	}
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

func truncateKey(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
