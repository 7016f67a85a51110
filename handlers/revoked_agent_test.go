package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestARevokedAgentIsShownRevoked: once an agent's connection is revoked,
// its row on the Participants tab says so and has no controls (changing
// its role is refused), and the owner's Reply to its note warns at once and
// is refused, as reply_to_sender refuses that target, writing nothing.
func TestARevokedAgentIsShownRevoked(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	note := f.app.agentNote(f.ag, f.session.ID, "Question", "Which rounding?")
	if err := f.app.store.RevokeConnection(t.Context(), f.ag.workspaceID, f.ag.connID); err != nil {
		t.Fatal(err)
	}

	doc := f.alice.doc(f.alice.get(f.url+"/participants"), http.StatusOK)
	row := doc.Find(`[data-testid="participant"]`)
	if row.Find(`[data-testid="participant-revoked"]`).Length() != 1 || row.Find(`[data-testid="participant-revoked-note"]`).Length() != 1 {
		t.Fatalf("the revoked agent's row does not say so: %q", row.Text())
	}
	if n := row.Find(`form, select, button`).Length(); n != 0 {
		t.Fatalf("the revoked agent's row has %d controls", n)
	}
	if res := f.alice.post(fmt.Sprintf("%s/invitations/%d", f.url, f.ag.connID), url.Values{"role": {"runner"}}); res.StatusCode != http.StatusConflict {
		t.Fatalf("changing a revoked agent's role: %d", res.StatusCode)
	}

	comp := f.alice.doc(f.alice.htmx(fmt.Sprintf("%s/compose?reply_to=%d", f.url, note)), http.StatusOK)
	if w := comp.Find(`[data-testid="error-reply_to"]`).Text(); !strings.Contains(w, "connection was revoked") {
		t.Fatalf("the composer does not warn: %q", w)
	}
	var n0 int
	f.app.sql().QueryRow(`SELECT count(*) FROM notes`).Scan(&n0)
	res := f.alice.postHTMX(fmt.Sprintf("%s/mail", f.url), url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(note)}, "subject": {"Re"}, "body": {"Banker's"}, "after": {fmt.Sprint(note)}})
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("reply to a revoked agent: %d", res.StatusCode)
	}
	if w := f.alice.doc(res, http.StatusUnprocessableEntity).Find(`[data-testid="error-reply_to"]`).Text(); !strings.Contains(w, "connection was revoked") {
		t.Fatalf("refusal: %q", w)
	}
	var n1 int
	f.app.sql().QueryRow(`SELECT count(*) FROM notes`).Scan(&n1)
	if n1 != n0 {
		t.Fatal("the refused reply was written")
	}
}
