package agent

import (
	"io"
	"strings"
	"unicode"
)

// printable drops what a terminal would act on rather than show: control
// characters (escape sequences) and the bidirectional overrides that reorder
// text. A server's words pass through it on their way to the terminal.
func printable(s string) string {
	if !strings.ContainsFunc(s, unprintable) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unprintable(r) {
			return -1
		}
		return r
	}, s)
}

func unprintable(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
		return true
	}
	return false
}

type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, printable(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

type printableError struct{ err error }

func (e printableError) Error() string { return printable(e.err.Error()) }
func (e printableError) Unwrap() error { return e.err }
