package handlers

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

// TestAccountEditsNameAndEmail: a name changes alone; a new email needs the
// password (refused without it or with a wrong one, nothing changed), is
// refused when another owner has it, and once saved is the one to sign in
// with.
func TestAccountEditsNameAndEmail(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")
	app.owner("bob@example.com", "")
	alice.refreshCSRF("/account")

	res := alice.post("/account/profile", url.Values{"display_name": {"Alice Liddell"}, "email": {"alice@example.com"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("name alone: %d", res.StatusCode)
	}
	doc := alice.doc(alice.get("/account"), http.StatusOK)
	if got := doc.Find(`[data-testid="account-name"]`).Text(); got != "Alice Liddell" {
		t.Fatalf("name %q after saving", got)
	}
	if got := doc.Find(`[data-testid="signed-in-as"]`).Text(); got != "Alice Liddell" {
		t.Errorf("the top bar still says %q", got)
	}

	for _, c := range []struct {
		name, email, password, field string
	}{
		{"no password", "alice@new.example", "", "password"},
		{"wrong password", "alice@new.example", "not it at all", "password"},
		{"taken", "bob@example.com", testPassword, "email"},
		{"not an email", "alice@", testPassword, "email"},
		{"empty name", "alice@example.com", "", "display_name"},
	} {
		name := "Alice Liddell"
		if c.field == "display_name" {
			name = " "
		}
		doc := alice.doc(alice.post("/account/profile", url.Values{"display_name": {name}, "email": {c.email}, "password": {c.password}}), http.StatusUnprocessableEntity)
		if doc.Find(`[data-testid="error-`+c.field+`"]`).Length() != 1 {
			t.Errorf("%s: no error on %s", c.name, c.field)
		}
		if _, open := doc.Find(`[data-testid="profile-edit"]`).Attr("open"); !open {
			t.Errorf("%s: the refused form is folded", c.name)
		}
	}
	if o, err := app.store.OwnerByID(context.Background(), alice.owner.ID); err != nil || o.Email != "alice@example.com" {
		t.Fatalf("a refused change changed the email: %v %v", o, err)
	}

	res = alice.post("/account/profile", url.Values{"display_name": {"Alice Liddell"}, "email": {"Alice@New.Example"}, "password": {testPassword}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("new email: %d", res.StatusCode)
	}
	if got := alice.doc(alice.get("/account"), http.StatusOK).Find(`[data-testid="account-email"]`).Text(); got != "alice@new.example" {
		t.Fatalf("email %q after saving", got)
	}
	c := app.client()
	if res, _ := c.post("/login", url.Values{"_csrf": {c.csrf("/login")}, "email": {"alice@new.example"}, "password": {testPassword}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in with the new email: %d", res.StatusCode)
	}
}
