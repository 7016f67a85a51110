package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// site is the app with a signed-in owner whose requests return parsed pages.
type site struct {
	t       *testing.T
	srv     *httptest.Server
	st      *store.Store
	owner   *store.Owner
	browser *http.Client
}

func newSite(t *testing.T) *site {
	t.Helper()
	a := newTestApp(t)
	o := a.owner("owner@example.com", "Home")
	return &site{t: t, srv: a.srv, st: a.store, owner: o.owner, browser: o.http}
}

func (s *site) get(path string) (*http.Response, *goquery.Document) {
	s.t.Helper()
	return s.parse(s.browser.Get(s.srv.URL + path))
}

func (s *site) post(path string, f url.Values) *http.Response {
	s.t.Helper()
	resp, err := s.browser.PostForm(s.srv.URL+path, f)
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func (s *site) postDoc(path string, f url.Values) (*http.Response, *goquery.Document) {
	s.t.Helper()
	return s.parse(s.browser.PostForm(s.srv.URL+path, f))
}

// parse reads the page a request answered, failing the test when it was not
// answered.
func (s *site) parse(resp *http.Response, err error) (*http.Response, *goquery.Document) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	d, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp, d
}

func csrf(d *goquery.Document) string {
	v, _ := d.Find(`input[name="_csrf"]`).First().Attr("value")
	return v
}

func (s *site) csrf() string {
	_, d := s.get("/connections")
	return csrf(d)
}

func TestConnectionsPage(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ctx := context.Background()
	pr, _ := s.st.CreateProject(ctx, s.owner.WorkspaceID, "Alpha")
	id := "client-1"
	if err := s.st.CreateOAuthClient(ctx, &store.OAuthClient{ClientID: id, ClientName: "Claude Code", RedirectURIs: []string{"http://localhost/cb"}, TokenEndpointAuthMethod: "none"}, "test"); err != nil {
		t.Fatal(err)
	}
	c, err := s.st.CreateConnection(ctx, store.NewConnection{WorkspaceID: s.owner.WorkspaceID, OwnerID: s.owner.ID, ClientID: &id, ClientName: "Claude Code", Scopes: []string{store.ScopeRead}, ProjectIDs: []int64{pr.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.ClaimProfile(ctx, s.owner.WorkspaceID, c.ID, "alice-claude", "Alice's Claude"); err != nil {
		t.Fatal(err)
	}
	storetest.SQL(t, s.st).SetLastSeen(c.ID, 0)

	resp, d := s.get("/connections")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	row := d.Find(`[data-testid="connection"]`)
	if row.Length() != 1 {
		t.Fatalf("%d connection rows", row.Length())
	}
	for hook, want := range map[string]string{
		"connection-client":   "Claude Code",
		"connection-scopes":   "Read",
		"connection-handle":   "alice-claude",
		"connection-projects": "Alpha",
		"connection-presence": "active",
	} {
		if got := strings.TrimSpace(row.Find(`[data-testid="` + hook + `"]`).Text()); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want %q", hook, got, want)
		}
	}
	if !row.Find(`[data-testid="connection-presence"]`).HasClass("active") {
		t.Error("presence lacks its colour class")
	}

	t.Run("signed out goes to sign in", func(t *testing.T) {
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(s.srv.URL + "/connections")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fconnections" {
			t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("revoke asks first", func(t *testing.T) {
		resp, d := s.get(fmt.Sprintf("/connections/%d/revoke", c.ID))
		if resp.StatusCode != 200 || d.Find(`[data-testid="confirm-revoke"]`).Length() != 1 {
			t.Fatalf("confirm page: %d", resp.StatusCode)
		}
	})
	t.Run("revoke without CSRF is refused", func(t *testing.T) {
		resp := s.post(fmt.Sprintf("/connections/%d/revoke", c.ID), url.Values{})
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if got, _ := s.st.GetConnection(ctx, s.owner.WorkspaceID, c.ID); got.RevokedAt != nil {
			t.Fatal("revoked without CSRF")
		}
	})
	t.Run("another workspace's connection is not found", func(t *testing.T) {
		other, err := s.st.CreateOwner(ctx, store.NewOwner{Email: "eve@example.com", DisplayName: "Eve", Password: testPassword, WorkspaceName: "Elsewhere"})
		if err != nil {
			t.Fatal(err)
		}
		oc, err := s.st.CreateConnection(ctx, store.NewConnection{WorkspaceID: other.WorkspaceID, OwnerID: other.ID, ClientName: "Eve's agent", Scopes: []string{store.ScopeRead}})
		if err != nil {
			t.Fatal(err)
		}
		if resp, _ := s.get(fmt.Sprintf("/connections/%d/revoke", oc.ID)); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("confirm page for a foreign connection: %d", resp.StatusCode)
		}
		if resp := s.post(fmt.Sprintf("/connections/%d/revoke", oc.ID), url.Values{"_csrf": {s.csrf()}}); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("revoke of a foreign connection: %d", resp.StatusCode)
		}
		if got, _ := s.st.GetConnection(ctx, other.WorkspaceID, oc.ID); got.RevokedAt != nil {
			t.Fatal("foreign connection revoked")
		}
		_, d := s.get("/connections")
		if strings.Contains(d.Text(), "Eve's agent") {
			t.Fatal("another workspace's connection listed")
		}
	})
	t.Run("revoke ends the grant and clears status", func(t *testing.T) {
		repo, task := "osfoundry", "testing"
		if _, err := s.st.SetStatus(ctx, s.owner.WorkspaceID, c.ID, store.StatusUpdate{
			Repo: store.StatusField{Set: true, Value: &repo}, Task: store.StatusField{Set: true, Value: &task}}); err != nil {
			t.Fatal(err)
		}
		tok, _, err := s.st.MintAccessToken(ctx, c.ID, s.srv.URL+"/mcp", c.Scopes, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		resp := s.post(fmt.Sprintf("/connections/%d/revoke", c.ID), url.Values{"_csrf": {s.csrf()}})
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/connections" {
			t.Fatalf("revoke: %d", resp.StatusCode)
		}
		if _, err := s.st.UseAccessToken(ctx, tok, s.srv.URL+"/mcp"); err == nil {
			t.Fatal("token still valid")
		}
		var n int
		_ = storetest.SQL(t, s.st).QueryRow(`SELECT count(*) FROM statuses WHERE connection_id = $1`, c.ID).Scan(&n)
		if n != 0 {
			t.Fatal("status not cleared")
		}
		_, d := s.get("/connections")
		if d.Find(`[data-testid="connection"]`).Length() != 0 || d.Find(`[data-testid="no-connections"]`).Length() != 1 {
			t.Fatal("revoked connection still listed")
		}
		// It stays on the page, folded with the revoked ones, with the way back.
		revoked := d.Find(`details[data-testid="revoked-connections"]`)
		if _, open := revoked.Attr("open"); open || revoked.Find(fmt.Sprintf(`[data-testid="revoked-connection"][data-connection-id="%d"]`, c.ID)).Length() != 1 ||
			!strings.Contains(revoked.Find(`[data-testid="copy-revoked-login"]`).Text(), "agent login --server "+s.srv.URL) {
			t.Fatal("the revoked connection is not listed, folded, with the way back")
		}
		if resp, _ := s.get(fmt.Sprintf("/connections/%d/revoke", c.ID)); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("revoked connection's confirm page: %d", resp.StatusCode)
		}
	})
}

func TestStaticTokenForm(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ctx := context.Background()
	pr, _ := s.st.CreateProject(ctx, s.owner.WorkspaceID, "Alpha")

	t.Run("without CSRF", func(t *testing.T) {
		if resp := s.post("/connections/tokens", url.Values{"client_name": {"x"}, "scope": {store.ScopeRead}}); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	t.Run("validation", func(t *testing.T) {
		resp, d := s.postDoc("/connections/tokens", url.Values{"_csrf": {s.csrf()}, "client_name": {""}})
		if resp.StatusCode != http.StatusUnprocessableEntity || d.Find(`[data-testid="error-client_name"]`).Length() != 1 {
			t.Fatalf("empty name: %d", resp.StatusCode)
		}
		resp, d = s.postDoc("/connections/tokens", url.Values{"_csrf": {s.csrf()}, "client_name": {"Zed"}})
		if resp.StatusCode != http.StatusUnprocessableEntity || d.Find(`[data-testid="error-scope"]`).Length() != 1 {
			t.Fatalf("no scope: %d", resp.StatusCode)
		}
	})
	t.Run("token shown once and accepted for the resource", func(t *testing.T) {
		// The form redirects to the Connections page, which shows the token
		// once: reloading it neither shows it again nor mints another.
		resp := s.post("/connections/tokens", url.Values{"_csrf": {s.csrf()}, "client_name": {"Zed editor"}, "scope": {store.ScopeRead}, "project": {fmt.Sprint(pr.ID)}})
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/connections" {
			t.Fatalf("status %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		resp, d := s.get("/connections")
		if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("status %d", resp.StatusCode)
		}
		tok, _ := d.Find(`[data-testid="new-token-value"]`).Attr("value")
		ti, err := s.st.UseAccessToken(ctx, tok, s.srv.URL+"/mcp")
		if err != nil {
			t.Fatalf("minted token not accepted: %v", err)
		}
		if ti.HasScope(store.ScopeWrite) {
			t.Fatal("write granted without being chosen")
		}
		row := d.Find(`[data-testid="connection"]`)
		if row.Length() != 1 || !strings.Contains(row.Text(), "Zed editor") || !strings.Contains(row.Find(`[data-testid="connection-projects"]`).Text(), "Alpha") {
			t.Fatalf("connection not listed: %q", row.Text())
		}
		_, d = s.get("/connections")
		if d.Find(`[data-testid="new-token"]`).Length() != 0 || strings.Contains(d.Text(), tok) {
			t.Fatal("token shown again")
		}
	})
}
