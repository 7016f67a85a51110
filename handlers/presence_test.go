package handlers

import (
	"net/http"
	"testing"
	"time"
)

func TestStaleStatusIsDimmedNotHidden(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	f.app.setStatus(f.ag, nil, nil, new("old task"))
	f.app.sql().AgeStatuses(3 * 24 * time.Hour)
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	st := doc.Find(`[data-testid="presence-status"]`)
	if !st.HasClass("stale") || st.Find(`[data-testid="status-task"]`).Text() != "old task" {
		t.Fatal("a day-old status must be dimmed and still shown")
	}
	// A cleared status says so.
	f.app.setStatus(f.ag, nil, nil, nil)
	doc = f.alice.doc(f.alice.get(f.url), http.StatusOK)
	if doc.Find(`[data-testid="status-cleared"]`).Length() != 1 {
		t.Fatal("cleared status not shown as cleared")
	}
}
