package handlers

import (
	"net/http"
	"strings"
	"testing"
)

func TestHealthStaticAndErrors(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.client()
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/nope": 404} {
		res, _ := c.get(path)
		if res.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, res.StatusCode, want)
		}
	}
	res, body := c.get("/nope")
	if res.StatusCode != 404 || !strings.Contains(body, `data-testid="error-page"`) {
		t.Fatalf("404 page: %d %s", res.StatusCode, body)
	}
	req, _ := http.NewRequest(http.MethodGet, app.srv.URL+"/nope", nil)
	req.Header.Set("HX-Request", "true")
	res, body = c.do(req)
	if res.StatusCode != 404 || strings.Contains(body, "<html") || !strings.Contains(body, "error-fragment") {
		t.Fatalf("htmx 404 must be a fragment: %d %s", res.StatusCode, body)
	}
	_, page := c.get("/setup")
	m := strings.Index(page, "/static/")
	if m < 0 {
		t.Fatal("no static link")
	}
	link := page[m : m+strings.IndexByte(page[m:], '"')]
	res, _ = c.get(link)
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("%s: %d %q", link, res.StatusCode, res.Header.Get("Cache-Control"))
	}
	res, _ = c.get("/static/stale/app.css")
	if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("stale hash: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
}
