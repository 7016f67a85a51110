package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

func TestParticipants(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	other := f.app.agent("alice@example.com", "", "other-bot", "Other "+xss)
	p := f.url + "/participants"
	doc := f.alice.doc(f.alice.get(p), http.StatusOK)
	if n := doc.Find(`[data-testid="participant"]`).Length(); n != 1 {
		t.Fatalf("%d participants", n)
	}
	html, _ := doc.Html()
	noRawXSS(t, html)
	doc = f.alice.doc(f.alice.post(f.url+"/invitations", url.Values{"connection_id": {"424242"}, "role": {"runner"}}), http.StatusUnprocessableEntity)
	if doc.Find(`[data-testid="error-connection_id"]`).Length() != 1 {
		t.Fatal("no error for an unknown connection")
	}
	if res := f.alice.post(f.url+"/invitations", url.Values{"connection_id": {fmt.Sprint(other.connID)}, "role": {"runner"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("invite %d", res.StatusCode)
	}
	if res := f.alice.post(fmt.Sprintf("%s/invitations/%d", f.url, other.connID), url.Values{"role": {"contributor"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("change role %d", res.StatusCode)
	}
	role, _ := f.app.store.InvitationRole(t.Context(), f.alice.owner.WorkspaceID, f.session.ID, other.connID)
	if role != store.RoleContributor {
		t.Fatalf("role %q", role)
	}
	if res := f.alice.post(fmt.Sprintf("%s/invitations/%d/remove", f.url, other.connID), nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove %d", res.StatusCode)
	}
	if res := f.alice.post(fmt.Sprintf("%s/invitations/%d/remove", f.url, other.connID), nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("remove twice %d", res.StatusCode)
	}
}
