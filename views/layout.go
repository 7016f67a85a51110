package views

import "encoding/json"

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
