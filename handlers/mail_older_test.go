package handlers

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

func TestOlderNotes(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	var ids []int64
	for i := range store.MailPageSize + 2 {
		ids = append(ids, f.app.agentNote(f.ag, f.session.ID, fmt.Sprintf("n%d", i), "b"))
	}
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	shown := noteIDs(doc)
	if len(shown) != store.MailPageSize || shown[0] != ids[len(ids)-1] {
		t.Fatalf("first page: %d rows from %d", len(shown), shown[0])
	}
	older, _ := doc.Find(`[data-testid="mail-older"]`).Attr("hx-get")
	rows := f.alice.doc(f.alice.htmx(older), http.StatusOK)
	if got := noteIDs(rows); len(got) != 2 || got[0] != ids[1] || got[1] != ids[0] {
		t.Fatalf("older rows %v", got)
	}
	if rows.Find(`#mail-older [data-testid="mail-older"]`).Length() != 0 {
		t.Fatal("an older link after the oldest note")
	}
	// Without script the link is a page of its own, which does not poll.
	href, _ := doc.Find(`[data-testid="mail-older"]`).Attr("href")
	page := f.alice.doc(f.alice.get(href), http.StatusOK)
	if len(noteIDs(page)) != 2 || page.Find(`#mail-poller`).Length() != 0 || page.Find(`[data-testid="mail-paged"]`).Length() != 1 {
		t.Fatal("older page: wrong rows, or it polls")
	}
}
