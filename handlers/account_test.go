package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// signInAgain is another browser of c's owner, signed in from ip with a
// user agent of its own.
func (a *testApp) signInAgain(c *ownerClient, ip, userAgent string) *ownerClient {
	a.t.Helper()
	other := &ownerClient{client: a.clientFrom(ip), owner: c.owner}
	other.http.Transport = userAgentTransport{other.http.Transport, userAgent}
	other.refreshCSRF("/login")
	if res := other.post("/login", url.Values{"email": {c.owner.Email}, "password": {testPassword}}); res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("sign in again: %d", res.StatusCode)
	}
	other.refreshCSRF("/")
	return other
}

// userAgentTransport sends a User-Agent of its own.
type userAgentTransport struct {
	http.RoundTripper
	ua string
}

func (u userAgentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", u.ua)
	return u.RoundTripper.RoundTrip(r)
}

// signedIn reports whether c's cookie still signs in (on base).
func (c *ownerClient) signedIn(base string) bool {
	c.app.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
	res := c.do(req)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// signInIDs are the ids of the sign-in rows of the account page.
func signInIDs(doc *goquery.Document) []string {
	var ids []string
	doc.Find(`[data-testid="sign-in"]`).Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-sign-in-id", "")) })
	return ids
}

// TestCopiedCookieIsRefusedAfterSignOut: a copy of a signed-in cookie stops
// working when its sign-in ends: on this replica at once, on another as
// soon as it hears of it, and it mints no authorization code either.
func TestCopiedCookieIsRefusedAfterSignOut(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	ctx := context.Background()
	alice := app.owner("alice@example.com", "")
	if err := app.store.CreateOAuthClient(ctx, &store.OAuthClient{ClientID: "c1", ClientName: "Client",
		RedirectURIs: []string{"http://127.0.0.1/cb"}, TokenEndpointAuthMethod: "none"}, "test"); err != nil {
		t.Fatal(err)
	}
	q := url.Values{"client_id": {"c1"}, "redirect_uri": {"http://127.0.0.1/cb"}, "response_type": {"code"}, "state": {"s1"},
		"code_challenge": {strings.Repeat("a", 43)}, "code_challenge_method": {"S256"}, "resource": {app.srv.URL + "/mcp"}, "scope": {"osfoundry:read"}}
	site, _ := url.Parse(app.srv.URL)
	stolen := alice.http.Jar.Cookies(site)
	_, bsrv := app.replica()
	// The thief's requests carry the copied cookie, nothing else.
	thief := func(method, base, path string, form url.Values) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(form.Encode()))
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for _, ck := range stolen {
			req.AddCookie(ck)
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := thief(http.MethodGet, app.srv.URL, "/", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("the copy before sign-out: %d", res.StatusCode)
	}
	if res := thief(http.MethodGet, bsrv.URL, "/", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("the copy on replica B before sign-out: %d", res.StatusCode)
	}
	approve := url.Values{"_csrf": {alice.csrf}, "decision": {"approve"}, "grant": {store.ScopeRead}}
	for k, v := range q {
		approve[k] = v
	}
	if res := alice.post("/logout", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", res.StatusCode)
	}
	if res := thief(http.MethodGet, app.srv.URL, "/", nil); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("the copy after sign-out: %d %s, want sent to sign in", res.StatusCode, res.Header.Get("Location"))
	}
	res := thief(http.MethodPost, app.srv.URL, "/authorize", approve)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/login") || strings.Contains(loc, "code=") {
		t.Fatalf("the copy approving a client after sign-out: %d %s", res.StatusCode, loc)
	}
	var codes int
	app.sql().QueryRow(`SELECT count(*) FROM oauth_codes`).Scan(&codes)
	if codes != 0 {
		t.Fatalf("%d authorization codes minted with a signed-out cookie", codes)
	}
	// Replica B hears of the sign-out (bounded wait, not a sleep).
	deadline := time.Now().Add(5 * time.Second)
	for thief(http.MethodGet, bsrv.URL, "/", nil).StatusCode == http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("replica B still takes the copied cookie 5 s after sign-out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAccountPageListsSignInsAndEndsThem: the account page lists the owner's
// sign-ins (browser, address, this one marked, everything escaped); "Sign
// out" on one ends it (its streams get signout), "Sign out all others" ends
// the rest, and signing out this browser's own row signs out.
func TestAccountPageListsSignInsAndEndsThem(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	a := app.owner("alice@example.com", "")
	b := app.signInAgain(a, "127.0.0.2", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
	c := app.signInAgain(a, "127.0.0.3", "<script>alert(1)</script>")
	stream := b.openEvents("/unread/stream")
	stream.next("unread", wait)

	res := a.get("/account")
	body := readAll(res)
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(body))
	if res.StatusCode != http.StatusOK || len(signInIDs(doc)) != 3 {
		t.Fatalf("account page: %d, %d sign-ins listed, want 3", res.StatusCode, len(signInIDs(doc)))
	}
	if strings.Contains(body, "<script>alert(1)</script>") {
		t.Fatal("a user agent reached the page unescaped")
	}
	if doc.Find(`[data-testid="sign-in"][data-current]`).Length() != 1 || doc.Find(`[data-testid="sign-in-current"]`).Length() != 1 {
		t.Fatal("this browser's sign-in is not marked")
	}
	var bID string
	doc.Find(`[data-testid="sign-in"]`).Each(func(_ int, s *goquery.Selection) {
		if strings.TrimSpace(s.Find(`[data-testid="sign-in-address"]`).Text()) == "127.0.0.2" {
			bID = s.AttrOr("data-sign-in-id", "")
			if got := strings.TrimSpace(s.Find(`[data-testid="sign-in-browser"]`).Text()); got != "Firefox on Linux" {
				t.Errorf("b's browser: %q", got)
			}
		}
	})
	if bID == "" {
		t.Fatal("b's sign-in (from 127.0.0.2) is not listed")
	}
	if doc.Find(`form[action="/account/sign-ins/end-others"] input[name="_csrf"]`).Length() != 1 {
		t.Fatal("no Sign out all others form with a CSRF token")
	}

	// Sign out b, from a: b's stream ends as signed out, b's cookie is refused.
	res = a.post("/account/sign-ins/"+bID+"/end", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/account?done=signed-out" {
		t.Fatalf("sign out b: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if got := stream.ends(wait); len(got) == 0 || got[len(got)-1].name != "signout" {
		t.Fatalf("b's stream ended with %+v, want signout", got)
	}
	if b.signedIn(app.srv.URL) {
		t.Fatal("b is still signed in")
	}
	if !c.signedIn(app.srv.URL) {
		t.Fatal("c was signed out with b")
	}
	// Sign out all others: c goes, a stays.
	if res := a.post("/account/sign-ins/end-others", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out all others: %d", res.StatusCode)
	}
	if c.signedIn(app.srv.URL) || !a.signedIn(app.srv.URL) {
		t.Fatal("sign out all others: c must be out, a in")
	}
	doc = a.doc(a.get("/account?done=others"), http.StatusOK)
	ids := signInIDs(doc)
	if len(ids) != 1 || !strings.Contains(doc.Find(`[data-testid="account-notice"]`).Text(), "Every other sign-in") {
		t.Fatalf("after sign out all others: %v listed", ids)
	}
	if doc.Find(`[data-testid="sign-out-others"]`).Length() != 0 {
		t.Fatal("Sign out all others offered with no others")
	}
	// This browser's own "Sign out" signs out.
	if res := a.post("/account/sign-ins/"+ids[0]+"/end", nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Fatalf("sign out this browser from its row: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if a.signedIn(app.srv.URL) {
		t.Fatal("still signed in after signing out this browser")
	}
}

// TestPasswordChangeEndsOtherSignIns: the account page changes the password
// given the current one (both refusals at once, tries throttled); other
// sign-ins end, this one stays, and only the new password signs in.
func TestPasswordChangeEndsOtherSignIns(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	a := app.owner("alice@example.com", "")
	b := app.signInAgain(a, "127.0.0.2", "Other browser")
	doc := a.doc(a.post("/account/password", url.Values{"current_password": {"not my password"}, "new_password": {"short"}}), http.StatusUnprocessableEntity)
	if got := doc.Find(`[data-testid="error-current_password"]`).Text(); !strings.Contains(got, "not your current password") || !strings.Contains(got, "tries left") {
		t.Fatalf("wrong current password: %q", got)
	}
	if got := doc.Find(`[data-testid="error-new_password"]`).Text(); !strings.Contains(got, "10 characters") {
		t.Fatalf("short new password: %q", got)
	}
	if !b.signedIn(app.srv.URL) {
		t.Fatal("a refused change signed b out")
	}
	res := a.post("/account/password", url.Values{"current_password": {testPassword}, "new_password": {"a much better password"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/account?done=password" {
		t.Fatalf("change: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	doc = a.doc(a.get("/account?done=password"), http.StatusOK)
	if !strings.Contains(doc.Find(`[data-testid="account-notice"]`).Text(), "other sign-ins were signed out") || len(signInIDs(doc)) != 1 {
		t.Fatal("after the change: no notice, or other sign-ins still listed")
	}
	if b.signedIn(app.srv.URL) {
		t.Fatal("b is still signed in after the password change")
	}
	for pw, want := range map[string]int{testPassword: http.StatusUnauthorized, "a much better password": http.StatusSeeOther} {
		c := app.clientFrom("127.0.0.4")
		if res, _ := c.post("/login", url.Values{"_csrf": {c.csrf("/login")}, "email": {"alice@example.com"}, "password": {pw}}); res.StatusCode != want {
			t.Errorf("sign in with %q: %d, want %d", pw, res.StatusCode, want)
		}
	}
	// Current-password checks are throttled like sign-ins.
	for range web.PasswordFreeTries {
		a.post("/account/password", url.Values{"current_password": {"guess"}, "new_password": {"another good password"}})
	}
	res = a.post("/account/password", url.Values{"current_password": {"guess"}, "new_password": {"another good password"}})
	body := readAll(res)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "Try again in") {
		t.Fatalf("past the free tries: %d", res.StatusCode)
	}
}

func readAll(res *http.Response) string {
	b := new(strings.Builder)
	_, _ = fmt.Fprint(b, string(mustRead(res)))
	return b.String()
}

func mustRead(res *http.Response) []byte {
	defer res.Body.Close()
	return readBody(res)
}
