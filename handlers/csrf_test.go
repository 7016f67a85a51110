package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

func TestCSRFRefused(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")
	p := alice.project("P")
	session := alice.session(p, "S")
	for _, path := range []string{
		"/projects", fmt.Sprintf("/projects/%d/rename", p.ID), fmt.Sprintf("/projects/%d/sessions", p.ID),
		fmt.Sprintf("/sessions/%d/mail", session.ID), fmt.Sprintf("/sessions/%d/invitations", session.ID),
	} {
		for _, htmx := range []bool{false, true} {
			res := alice.postRaw(path, url.Values{"name": {"n"}, "type": {"note"}, "body": {"b"}}, htmx)
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s without token (htmx %v): %d, want 403", path, htmx, res.StatusCode)
			}
			res = alice.postRaw(path, url.Values{"_csrf": {"wrong"}, "type": {"note"}, "body": {"b"}}, htmx)
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with a wrong token: %d, want 403", path, res.StatusCode)
			}
		}
	}
	notes, err := app.store.ListSessionMail(t.Context(), alice.owner.WorkspaceID, session.ID, 0, 10)
	if err != nil || len(notes) != 0 {
		t.Fatalf("a refused post wrote %d notes (%v)", len(notes), err)
	}
}
