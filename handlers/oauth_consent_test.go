package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

func TestConsentPage(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ctx := context.Background()
	if _, err := s.st.CreateProject(ctx, s.owner.WorkspaceID, "Alpha"); err != nil {
		t.Fatal(err)
	}
	if err := s.st.CreateOAuthClient(ctx, &store.OAuthClient{ClientID: "c1", ClientName: "Cursor <script>", RedirectURIs: []string{"cursor://anysphere.cursor-retrieval/oauth/cb"}, TokenEndpointAuthMethod: "none"}, "test"); err != nil {
		t.Fatal(err)
	}
	q := url.Values{
		"client_id": {"c1"}, "redirect_uri": {"cursor://anysphere.cursor-retrieval/oauth/cb"}, "response_type": {"code"},
		"state": {"s1"}, "code_challenge": {strings.Repeat("a", 43)}, "code_challenge_method": {"S256"},
		"resource": {s.srv.URL + "/mcp"}, "scope": {"osfoundry:read osfoundry:write"},
	}
	resp, d := s.get("/authorize?" + q.Encode())
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if h := d.Find("h1").First().Text(); h != "Connect osFoundry" {
		t.Errorf("heading %q", h)
	}
	if got := d.Find(`[data-testid="consent-client-name"]`).Text(); got != "Cursor <script>" {
		t.Errorf("client name %q", got)
	}
	if d.Find(`[data-testid="consent-unverified"]`).Length() != 1 {
		t.Error("client not marked unverified")
	}
	if got := d.Find(`[data-testid="consent-redirect-host"]`).Text(); got != "cursor://anysphere.cursor-retrieval" {
		t.Errorf("redirect host %q", got)
	}
	if d.Find(`[data-testid="consent-scope-Read"]`).Length() != 1 || d.Find(`[data-testid="consent-scope-Write"] input[type=checkbox]`).Length() != 1 {
		t.Error("scopes not shown in words, or write cannot be unticked")
	}
	if d.Find(`[data-testid="consent-project"]`).Length() != 1 {
		t.Error("projects not offered")
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "cursor:") {
		t.Errorf("CSP does not let the form go to the client's scheme: %q", csp)
	}
	t.Run("CSRF refused", func(t *testing.T) {
		f := url.Values{"decision": {"approve"}, "grant": {store.ScopeRead}}
		for k, v := range q {
			f[k] = v
		}
		resp := s.post("/authorize", f)
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	t.Run("approve redirects to the custom scheme", func(t *testing.T) {
		f := url.Values{"decision": {"approve"}, "grant": {store.ScopeRead, store.ScopeWrite}, "_csrf": {csrf(d)}}
		for k, v := range q {
			f[k] = v
		}
		resp := s.post("/authorize", f)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || loc.Scheme != "cursor" || loc.Query().Get("code") == "" || loc.Query().Get("state") != "s1" || loc.Query().Get("iss") != s.srv.URL {
			t.Fatalf("%d %s", resp.StatusCode, loc)
		}
	})
}
