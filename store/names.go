package store

import "unicode"

// CheckDisplayName refuses a display name holding a character that could change how the text around
// it reads: control characters, line separators and bidirectional overrides, which could forge a
// sender line.
func CheckDisplayName(field, name string) error {
	if !oneLine(name) {
		return &FieldError{field, "must be one line of text, without control characters (line breaks, tabs, escapes or direction overrides)"}
	}
	return nil
}

func oneLine(s string) bool {
	for _, r := range s {
		if !displayable(r) {
			return false
		}
	}
	return true
}

func displayable(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return false
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
		return false
	}
	return true
}

// DisplayableName is name without the characters CheckDisplayName refuses,
// for a name stored before that rule.
func DisplayableName(name string) string {
	out := []rune(nil)
	for _, r := range name {
		if displayable(r) {
			out = append(out, r)
		}
	}
	return string(out)
}
