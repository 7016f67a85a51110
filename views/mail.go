package views

import (
	"strings"
	"unicode/utf8"

	"github.com/osfoundry/osfoundry/store"
)

// Long bodies show a preview and a "show more" disclosure.
const (
	collapseRunes = 700
	collapseLines = 12
	previewRunes  = 420
	previewLines  = 7
)

// bodyPreview returns the start of a long body to show collapsed, and false
// when the body is short enough to show whole.
func bodyPreview(body string) (string, bool) {
	if utf8.RuneCountInString(body) <= collapseRunes && strings.Count(body, "\n") < collapseLines {
		return body, false
	}
	cut := body
	if lines := strings.SplitAfterN(cut, "\n", previewLines+1); len(lines) > previewLines {
		cut = strings.Join(lines[:previewLines], "")
	}
	if utf8.RuneCountInString(cut) > previewRunes {
		cut = string([]rune(cut)[:previewRunes])
		if i := strings.LastIndexAny(cut, " \n"); i > previewRunes/2 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(cut, " \n") + "…", true
}

// ReplySubject prefixes "Re: " once.
func ReplySubject(subject string) string {
	if strings.HasPrefix(strings.ToLower(subject), "re:") {
		return subject
	}
	s := "Re: " + subject
	if utf8.RuneCountInString(s) > store.MaxSubjectLen {
		s = string([]rune(s)[:store.MaxSubjectLen])
	}
	return s
}
