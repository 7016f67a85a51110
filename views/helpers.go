package views

import (
	"encoding/json"
	"fmt"
	"time"
)

func csrfHeaders(token string) string {
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token})
	return string(b)
}

func current(nav, want string) string {
	if nav == want {
		return "page"
	}
	return "false"
}

func mainClass(p *Page) string {
	if p.Owner == nil {
		return "narrow"
	}
	return ""
}

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
