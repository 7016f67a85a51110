package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// setupCode offers a setup code, as a starting server does.
func (a *testApp) setupCode() string {
	a.t.Helper()
	code := store.NewSetupCode()
	if ok, err := a.store.AddSetupCode(context.Background(), code); err != nil || !ok {
		a.t.Fatalf("add setup code: %v %v", ok, err)
	}
	return code
}

func TestFirstRunSetupSignInSignOut(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	code := app.setupCode()
	c := app.client()

	res, _ := c.get("/")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/setup" {
		t.Fatalf("fresh install: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res, _ = c.get("/login")
	if res.Header.Get("Location") != "/setup" {
		t.Fatalf("login on fresh install should go to setup, got %q", res.Header.Get("Location"))
	}
	_, page := c.get("/setup")
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
	if doc.Find(`label[for="setup_code"]`).Text() != "Setup code" || doc.Find(`input#setup_code[name="setup_code"]`).Length() != 1 {
		t.Fatal(`the setup form has no field labelled "Setup code"`)
	}

	token := c.csrf("/setup")
	// Without the CSRF token the form is refused and nothing is created.
	res, _ = c.post("/setup", url.Values{"setup_code": {code}, "email": {"a@example.com"}, "display_name": {"A"}, "password": {"long enough password"}})
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("setup without CSRF: %d", res.StatusCode)
	}
	if has, _ := app.store.HasOwner(context.Background()); has {
		t.Fatal("owner created without CSRF token")
	}
	// Every refused field at once, the code among them, each by its field;
	// what was typed is kept (the code and the password are not).
	res, body := c.post("/setup", url.Values{"_csrf": {token}, "setup_code": {"NOT-THE-CODE"}, "email": {"not an email"}, "display_name": {" "},
		"workspace": {strings.Repeat("w", 101)}, "password": {"short"}})
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(body))
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("refused form: %d", res.StatusCode)
	}
	for field, want := range map[string]string{"setup_code": "not the setup code", "email": "valid email", "display_name": "1 to 80",
		"workspace": "at most 100", "password": "10 characters"} {
		if got := doc.Find(`[data-testid="error-` + field + `"]`).Text(); !strings.Contains(got, want) {
			t.Errorf("error of %s: %q, want %q", field, got, want)
		}
		if v, _ := doc.Find("#" + field).Attr("aria-invalid"); v != "true" {
			t.Errorf("%s is not marked invalid", field)
		}
	}
	if v, _ := doc.Find("#email").Attr("value"); v != "not an email" {
		t.Fatalf("form lost the email: %q", v)
	}
	if app.store.Hashes().Counts().Run != 0 {
		t.Fatal("a refused setup form hashed a password")
	}
	// An empty code is asked for, not called wrong.
	_, body = c.post("/setup", url.Values{"_csrf": {token}, "setup_code": {" "}, "email": {"a@example.com"}, "display_name": {"A"}, "password": {"long enough password"}})
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(body))
	if got := doc.Find(`[data-testid="error-setup_code"]`).Text(); !strings.HasPrefix(got, "enter the setup code") {
		t.Errorf("error of an empty setup code: %q, want \"enter the setup code…\"", got)
	}
	// The right code alone is not enough either: the fields are still checked.
	res, body = c.post("/setup", url.Values{"_csrf": {token}, "setup_code": {code}, "email": {"a@example.com"}, "display_name": {"A"}, "password": {"short"}})
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(body))
	if res.StatusCode != http.StatusUnprocessableEntity || doc.Find(`[data-testid="error-setup_code"]`).Length() != 0 ||
		!strings.Contains(doc.Find(`[data-testid="error-password"]`).Text(), "10 characters") {
		t.Fatalf("right code, short password: %d", res.StatusCode)
	}
	res, _ = c.post("/setup", url.Values{"_csrf": {token}, "setup_code": {strings.ToLower(code)}, "email": {"A@Example.com"}, "display_name": {"Ada <b>"}, "password": {"long enough password"}})
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
	// Setup is closed now, also for a second visitor, even with the code.
	other := app.client()
	res, _ = other.get("/setup")
	if res.Header.Get("Location") != "/login" {
		t.Fatalf("setup after first owner: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	tok2 := other.csrf("/login")
	res, _ = other.post("/setup", url.Values{"_csrf": {tok2}, "setup_code": {code}, "email": {"b@example.com"}, "display_name": {"B"}, "password": {"long enough password"}})
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

// TestSetupOnAnInstalledServerHashesNothing: 60 concurrent POST /setup on
// an installed server, from an address the sign-in throttle already
// refuses, are all sent to sign in, and not one password is hashed.
func TestSetupOnAnInstalledServerHashesNothing(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	app.owner("alice@example.com", "")
	c := app.client()
	tok := c.csrf("/login")
	for range web.SignInFreeTries + 1 {
		c.post("/login", url.Values{"_csrf": {tok}, "email": {"alice@example.com"}, "password": {"wrong password"}})
	}
	if res, _ := c.post("/login", url.Values{"_csrf": {tok}, "email": {"alice@example.com"}, "password": {"wrong password"}}); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the address is not refused yet: %d", res.StatusCode)
	}
	hashed := app.store.Hashes().Counts().Run
	var wg sync.WaitGroup
	codes := make(chan int, 60)
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, app.srv.URL+"/setup", strings.NewReader(url.Values{"_csrf": {tok}, "setup_code": {"GUESS"},
				"email": {"m" + string(rune('a'+i%26)) + "@example.com"}, "display_name": {"M"}, "password": {"a long enough password"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := c.http.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
				codes <- res.StatusCode
			}
		}()
	}
	wg.Wait()
	close(codes)
	for code := range codes {
		t.Errorf("POST /setup on an installed server: %d, want 303 to /login", code)
	}
	if n := app.store.Hashes().Counts().Run - hashed; n != 0 {
		t.Fatalf("%d passwords hashed by 60 POST /setup on an installed server, want 0", n)
	}
}

// TestSetupIsThrottled: on a fresh install, wrong setup codes from one
// address slow down past the free tries (429 with Retry-After), and
// nothing is hashed for them.
func TestSetupIsThrottled(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	app.setupCode()
	c := app.client()
	tok := c.csrf("/setup")
	guess := url.Values{"_csrf": {tok}, "setup_code": {"GUESS"}, "email": {"m@example.com"}, "display_name": {"M"}, "password": {"a long enough password"}}
	for i := range web.SetupFreeTries {
		if res, _ := c.post("/setup", guess); res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("guess %d: %d, want 422", i+1, res.StatusCode)
		}
	}
	res, body := c.post("/setup", guess)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "Try again in") {
		t.Fatalf("guess past the free tries: %d Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if app.store.Hashes().Counts().Run != 0 {
		t.Fatal("wrong setup codes hashed passwords")
	}
}
