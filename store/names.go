package store

import "unicode"

// CheckDisplayName refuses a name shown to people and agents (an agent's or
// an owner's display name, a client's name) that holds a character which
// could change how the text around it reads: control characters (line
// breaks, tabs, escape sequences), line and paragraph separators, and the
// bidirectional embeddings, overrides and isolates. The FieldError names the
// field. A question's options and its first line follow the same rule.
func CheckDisplayName(field, name string) error {
	if !oneLine(name) {
		return &FieldError{field, "must be one line of text, without control characters (line breaks, tabs, escapes or direction overrides)"}
	}
	return nil
}

// oneLine reports whether s holds only characters a display name may
// (CheckDisplayName's rule).
func oneLine(s string) bool {
	for _, r := range s {
		if !displayable(r) {
			return false
		}
	}
	return true
}

// displayable reports whether a display name may hold r.
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
