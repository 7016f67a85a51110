package email

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// headerText encodes header text an agent may have written: plain ASCII as it
// is, anything else whole as RFC 2047 words, so no agent chooses an encoded word.
func headerText(s string) string {
	if plainHeader(s) {
		return s
	}
	// Encoded words are at most 75 characters, whole characters only, space-separated.
	var words []string
	for s != "" {
		n := 0
		for n < len(s) {
			_, size := utf8.DecodeRuneInString(s[n:])
			if n+size > 45 {
				break
			}
			n += size
		}
		words = append(words, "=?UTF-8?B?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, " ")
}

// plainHeader is printable ASCII without "=?" (the start of an encoded word).
func plainHeader(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return !strings.Contains(s, "=?")
}
