package views

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// Ago renders a duration in words, like "3 min ago".
func Ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 45*time.Second:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Round(time.Minute)/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%d d ago", int(d/(24*time.Hour)))
	}
}

// Exact renders a time for title attributes and <time datetime>.
func Exact(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// ISO renders a time for the datetime attribute.
func ISO(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// IsStale reports a status older than a day; it is dimmed, never hidden.
func IsStale(now time.Time, at *time.Time) bool {
	return at != nil && now.Sub(*at) > 24*time.Hour
}

// SessionTypeLabel names a session type of store.SessionTypes for people:
// "team_session" reads "Team session". Anything else shows as it is.
func SessionTypeLabel(t string) string {
	if !slices.Contains(store.SessionTypes, t) {
		return t
	}
	label := strings.ReplaceAll(t, "_", " ")
	return strings.ToUpper(label[:1]) + label[1:]
}

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

func idStr(id int64) string { return fmt.Sprint(id) }
