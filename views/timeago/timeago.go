// Package timeago words how long ago something happened, for the pages and
// for the MCP tools' text, which must not depend on the views.
package timeago

import (
	"fmt"
	"time"
)

// Format renders a duration in words, like "3 min ago".
func Format(now, t time.Time) string {
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
