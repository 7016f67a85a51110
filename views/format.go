package views

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views/timeago"
)

// Ago renders a duration in words, like "3 min ago" (timeago.Format).
var Ago = timeago.Format

// Since is relative under a day, then absolute; static/app.js redoes it in the
// browser's zone.
func Since(now, t time.Time) string {
	if now.Sub(t) < 24*time.Hour {
		return Ago(now, t)
	}
	return t.UTC().Format("2 Jan 2006, 15:04 UTC")
}

// RepliesLabel counts a thread's replies: "1 reply", "3 replies".
func RepliesLabel(n int) string { return plural(n, "reply", "replies") }

// parentLine is the subject, or the first line, of the note a reply answers.
func parentLine(p store.NoteParent) string {
	if p.Subject != "" {
		return p.Subject
	}
	if line := FirstLine(p.Excerpt, 120); line != "" {
		return line
	}
	return "(no text)"
}

// Until renders how long until t, like "in 12 s"; "now" once it is past.
func Until(now, t time.Time) string {
	d := t.Sub(now)
	switch {
	case d <= 0:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("in %d s", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("in %d min", int(d.Round(time.Minute)/time.Minute))
	default:
		return fmt.Sprintf("in %d h", int(d.Round(time.Hour)/time.Hour))
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

// SessionTypeLabel reads "team_session" as "Team session".
func SessionTypeLabel(t string) string {
	if !slices.Contains(store.SessionTypes, t) {
		return t
	}
	label := strings.ReplaceAll(t, "_", " ")
	return strings.ToUpper(label[:1]) + label[1:]
}

// WebhookKindLabel names a webhook endpoint kind for people.
func WebhookKindLabel(kind string) string {
	switch kind {
	case store.WebhookSlack:
		return "Slack-compatible"
	case store.WebhookJSON:
		return "JSON, signed"
	}
	return kind
}

// WebhookFiresLabel says which notes fire an endpoint.
func WebhookFiresLabel(fires string) string {
	switch fires {
	case store.FiresAgents:
		return "Agents' notes"
	case store.FiresAll:
		return "All notes"
	}
	return fires
}

// DeliveryStateLabel words a delivery's state.
func DeliveryStateLabel(d store.WebhookDelivery) string {
	switch {
	case d.State != store.DeliveryPending:
		return d.State
	case d.InFlight:
		return "sending"
	case d.Attempts > 0:
		return "retrying"
	}
	return "waiting"
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
