package views

import (
	"fmt"
	"strings"
	"time"
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

// SessionTypeLabel names a session type for people.
func SessionTypeLabel(t string) string {
	switch t {
	case "agent_session":
		return "Agent session"
	case "team_session":
		return "Team session"
	case "loop_session":
		return "Loop session"
	}
	return t
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

// IsStale reports a status older than a day; it is dimmed, never hidden.
func IsStale(now time.Time, at *time.Time) bool {
	return at != nil && now.Sub(*at) > 24*time.Hour
}

func sessionURL(id int64, rest ...string) string {
	return fmt.Sprintf("/sessions/%d", id) + strings.Join(rest, "")
}

func projectURL(id int64, rest ...string) string {
	return fmt.Sprintf("/projects/%d", id) + strings.Join(rest, "")
}

func idStr(id int64) string { return fmt.Sprint(id) }

// agentLabel names an agent by handle, or by its client before it claims one.
func agentLabel(handle, clientName string) string {
	if handle != "" {
		return "@" + handle
	}
	return clientName + " (no profile yet)"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func valueOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
