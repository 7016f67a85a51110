package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
)

func TestFirstRunSetupSignInSignOut(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.client()

	res, _ := c.get("/")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/setup" {
		t.Fatalf("fresh install: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res, _ = c.get("/login")
	if res.Header.Get("Location") != "/setup" {
		t.Fatalf("login on fresh install should go to setup, got %q", res.Header.Get("Location"))
	}

	token := c.csrf("/setup")
	// Without the CSRF token the form is refused and nothing is created.
	res, _ = c.post("/setup", url.Values{"email": {"a@example.com"}, "display_name": {"A"}, "password": {"long enough password"}})
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("setup without CSRF: %d", res.StatusCode)
	}
	if has, _ := app.store.HasOwner(context.Background()); has {
		t.Fatal("owner created without CSRF token")
	}
	// A short password re-renders the form with the message by the field.
	res, body := c.post("/setup", url.Values{"_csrf": {token}, "email": {"a@example.com"}, "display_name": {"A"}, "password": {"short"}})
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(body))
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(doc.Find(`[data-testid="error-password"]`).Text(), "10 characters") {
		t.Fatalf("short password: %d %q", res.StatusCode, doc.Find(`[data-testid="error-password"]`).Text())
	}
	if v, _ := doc.Find("#email").Attr("value"); v != "a@example.com" {
		t.Fatalf("form lost the email: %q", v)
	}
	res, _ = c.post("/setup", url.Values{"_csrf": {token}, "email": {"A@Example.com"}, "display_name": {"Ada <b>"}, "password": {"long enough password"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("setup: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res, body = c.get("/")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Ada &lt;b&gt;") || strings.Contains(body, "Ada <b>") {
		t.Fatalf("home after setup: %d, name escaped: %v", res.StatusCode, strings.Contains(body, "Ada &lt;b&gt;"))
	}
	if res.Header.Get("Vary") != "HX-Request" {
		t.Fatalf("Vary = %q", res.Header.Get("Vary"))
	}
	// Setup is closed now, also for a second visitor.
	other := app.client()
	res, _ = other.get("/setup")
	if res.Header.Get("Location") != "/login" {
		t.Fatalf("setup after first owner: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	tok2 := other.csrf("/login")
	res, _ = other.post("/setup", url.Values{"_csrf": {tok2}, "email": {"b@example.com"}, "display_name": {"B"}, "password": {"long enough password"}})
	if res.Header.Get("Location") != "/login" {
		t.Fatalf("second setup post: %d %s", res.StatusCode, res.Header.Get("Location"))
	}

	// Sign out needs the CSRF token too.
	res, _ = c.post("/logout", url.Values{})
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("logout without CSRF: %d", res.StatusCode)
	}
	res, _ = c.post("/logout", url.Values{"_csrf": {c.csrf("/")}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", res.StatusCode)
	}
	res, _ = c.get("/?tab=x")
	if loc := res.Header.Get("Location"); loc != "/login?next="+url.QueryEscape("/?tab=x") {
		t.Fatalf("signed out: %q", loc)
	}
	// Sign in comes back to where the owner was going.
	res, _ = c.post("/login", url.Values{"_csrf": {c.csrf("/login")}, "email": {"a@EXAMPLE.com"}, "password": {"long enough password"}, "next": {"/?tab=x"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/?tab=x" {
		t.Fatalf("login: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestLoginRefusalsAndThrottle(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	if _, err := app.store.CreateFirstOwner(context.Background(), store.NewOwner{Email: "a@example.com", DisplayName: "A", Password: "long enough password"}); err != nil {
		t.Fatal(err)
	}
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"} {
		c := app.client()
		token := c.csrf("/login")
		res, _ := c.post("/login", url.Values{"_csrf": {token}, "email": {"a@example.com"}, "password": {"long enough password"}, "next": {next}})
		if res.Header.Get("Location") != "/" {
			t.Errorf("next=%q redirected to %q, want /", next, res.Header.Get("Location"))
		}
	}
	c := app.client()
	token := c.csrf("/login")
	for i := range loginMaxFailures {
		res, body := c.post("/login", url.Values{"_csrf": {token}, "email": {"a@example.com"}, "password": {"wrong password"}})
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "do not match") {
			t.Fatalf("attempt %d: %d", i, res.StatusCode)
		}
	}
	res, body := c.post("/login", url.Values{"_csrf": {token}, "email": {"a@example.com"}, "password": {"long enough password"}})
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "Too many") {
		t.Fatalf("after %d failures the right password must wait: %d", loginMaxFailures, res.StatusCode)
	}
}
