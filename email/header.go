package email

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// headerText is text for a email header (a subject, a display name) that
// may hold what an agent wrote, as a email client must read it: plain
// printable ASCII as it is, anything else (other characters, or an
// "=?…?=" that a client would decode as an encoded word of its own) encoded
// whole as RFC 2047 encoded words of UTF-8, so that no text from an agent
// ever reaches a header as an encoded word it chose.
func headerText(s string) string {
	if plainHeader(s) {
		return s
	}
	// Each encoded word at most 75 characters: 45 bytes of text, whole
	// characters only; the words are separated by spaces, where the header
	// may fold.
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

// plainHeader reports whether s may go into a header as it is: printable
// ASCII with no "=?" (the start of an encoded word).
func plainHeader(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return !strings.Contains(s, "=?")
}
