package handlers

import (
	"net/http"
	"testing"
	"time"
)

func TestPresencePoll(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	src, _ := doc.Find(`#presence`).Attr("hx-get")
	if res := f.alice.htmx(src); res.StatusCode != http.StatusNoContent {
		t.Fatalf("unchanged sidebar: %d, want 204", res.StatusCode)
	}
	f.app.setStatus(f.ag, new("repo"), new("main"), new("new task "+xss))
	res := f.alice.htmx(src)
	side := f.alice.doc(res, http.StatusOK)
	if got := side.Find(`[data-testid="status-task"]`).Text(); got != "new task "+xss {
		t.Fatalf("task %q", got)
	}
	html, _ := side.Html()
	noRawXSS(t, html)
	next, _ := side.Find(`#presence`).Attr("hx-get")
	if next == src {
		t.Fatal("the new sidebar must carry a new version")
	}
	if res := f.alice.htmx(next); res.StatusCode != http.StatusNoContent {
		t.Fatalf("sidebar unchanged since: %d", res.StatusCode)
	}
	// Presence tiers change what it shows.
	f.app.sql().SetLastSeen(f.ag.connID, time.Hour)
	side = f.alice.doc(f.alice.htmx(next), http.StatusOK)
	if got := side.Find(`[data-testid="presence-tier"]`).Text(); got != "away" {
		t.Fatalf("tier %q, want away", got)
	}
}
