package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestSearchPageSaysWhereItStopped: words that meet a few times among the
// newest notes and not again for tens of thousands stop the search; the page
// says so, offers to narrow it or to search on from there, and that link
// finds the older hits.
func TestSearchPageSaysWhereItStopped(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	db := storetest.SQL(t, f.app.store)
	fill := func(n int, body string) {
		db.Exec(`
			INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name, message_type, subject, body)
			SELECT $1, $2, 'agent', $3::bigint, $4, 'Claude', 'note', 's', $5 FROM generate_series(1, $6::int)`,
			f.ag.workspaceID, f.session.ID, f.ag.connID, f.ag.slug, body, n)
	}
	fill(2, "alpha and beta long ago")
	// More than the search's window and walk (10,000 and 50,000 notes).
	fill(30000, "alpha alone")
	fill(30000, "beta alone")
	fill(5, "alpha with beta lately")
	db.Exec(`VACUUM ANALYZE notes`)
	doc := f.alice.doc(f.alice.get("/search?q="+url.QueryEscape("alpha beta")), http.StatusOK)
	if got := len(rowIDs(doc, "search-result")); got != 5 {
		t.Fatalf("%d results", got)
	}
	stopped := doc.Find(`[data-testid="search-stopped"]`)
	if !strings.Contains(stopped.Text(), "Narrow it") || doc.Find(`[data-testid="search-none"]`).Length() != 0 {
		t.Fatalf("the page does not say the search stopped: %q", stopped.Text())
	}
	further, ok := stopped.Find(`[data-testid="search-further"]`).Attr("href")
	if !ok || !strings.Contains(further, "before=") {
		t.Fatalf("search further: %q", further)
	}
	older := f.alice.doc(f.alice.get(further), http.StatusOK)
	if got := len(rowIDs(older, "search-result")); got != 2 || older.Find(`[data-testid="search-stopped"]`).Length() != 0 {
		t.Fatalf("%d older results", got)
	}
}
