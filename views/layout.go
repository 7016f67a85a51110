package views

import (
	"encoding/json"
)

// pageTitle is "(3) Fix rounding — osFoundry"; static/app.js rewrites the count alike.
func pageTitle(p *Page) string {
	t := "osFoundry"
	if p.Title != "" {
		t = p.Title + " — " + t
	}
	if p.Unread > 0 {
		t = "(" + unreadShown(p.Unread) + ") " + t
	}
	return t
}

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
