package handlers

import (
	"context"
	"fmt"
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
		f := url.Values{"decision": {"approve"}, "agent": {"new"}, "grant": {store.ScopeRead, store.ScopeWrite}, "_csrf": {csrf(d)}}
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

// TestConsentSeatsAndInvites: an owner with one project finds it ticked on
// the consent page; with two, neither is, and the page carries the warning
// that an agent seated nowhere sees nothing. The sessions of the projects
// are offered; approving invites the agent as a contributor to those of the
// ticked projects only.
func TestConsentSeatsAndInvites(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ctx := context.Background()
	ws := s.owner.WorkspaceID
	alpha, err := s.st.CreateProject(ctx, ws, "Alpha")
	if err != nil {
		t.Fatal(err)
	}
	a1, err := s.st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: alpha.ID, Type: "team_session", Title: "Checkout"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.st.CreateOAuthClient(ctx, &store.OAuthClient{ClientID: "c2", ClientName: "Agent", RedirectURIs: []string{"http://127.0.0.1/cb"}, TokenEndpointAuthMethod: "none"}, "test"); err != nil {
		t.Fatal(err)
	}
	q := url.Values{
		"client_id": {"c2"}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "response_type": {"code"},
		"state": {"s1"}, "code_challenge": {strings.Repeat("a", 43)}, "code_challenge_method": {"S256"},
		"resource": {s.srv.URL + "/mcp"}, "scope": {"osfoundry:read osfoundry:write"},
	}
	_, d := s.get("/authorize?" + q.Encode())
	if _, ticked := d.Find(`[data-testid="consent-project"]`).Attr("checked"); !ticked {
		t.Fatal("the owner's only project is not ticked")
	}
	if d.Find(`[data-testid="consent-session"]`).AttrOr("value", "") != fmt.Sprint(a1.ID) {
		t.Fatal("the project's session is not offered")
	}
	// Its one session is ticked too: approving with the defaults invites it.
	if _, ticked := d.Find(`[data-testid="consent-session"]`).Attr("checked"); !ticked {
		t.Fatal("the ticked project's only session is not ticked")
	}

	beta, err := s.st.CreateProject(ctx, ws, "Beta")
	if err != nil {
		t.Fatal(err)
	}
	b1, err := s.st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: beta.ID, Type: "agent_session", Title: "Refunds"})
	if err != nil {
		t.Fatal(err)
	}
	_, d = s.get("/authorize?" + q.Encode())
	if n := d.Find(`[data-testid="consent-project"][checked]`).Length(); n != 0 {
		t.Fatalf("%d projects ticked for an owner with two", n)
	}
	if w := d.Find(`[data-testid="consent-unseated"]`).Text(); !strings.Contains(w, "this agent will see nothing until it is seated") {
		t.Fatalf("no warning for an agent seated nowhere: %q", w)
	}
	if n := d.Find(`[data-testid="consent-session"]`).Length(); n != 2 {
		t.Fatalf("%d sessions offered, want 2", n)
	}

	f := url.Values{"decision": {"approve"}, "agent": {"new"}, "grant": {store.ScopeRead, store.ScopeWrite}, "_csrf": {csrf(d)},
		"project": {fmt.Sprint(alpha.ID)}, "invite": {fmt.Sprint(a1.ID), fmt.Sprint(b1.ID)}}
	for k, v := range q {
		f[k] = v
	}
	if resp := s.post("/authorize", f); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	conns, err := s.st.ListConnections(ctx, ws)
	if err != nil || len(conns) != 1 {
		t.Fatalf("%d connections, %v", len(conns), err)
	}
	if role, err := s.st.InvitationRole(ctx, ws, a1.ID, conns[0].ID); err != nil || role != store.RoleContributor {
		t.Fatalf("invitation to the ticked project's session: %q %v", role, err)
	}
	if _, err := s.st.InvitationRole(ctx, ws, b1.ID, conns[0].ID); err == nil {
		t.Fatal("invited to a session of a project that was not ticked")
	}

	// Revoked, then signing in again from the same registration (the same
	// checkout): the page preselects that agent, not a new one.
	if err := s.st.RevokeConnection(ctx, ws, conns[0].ID); err != nil {
		t.Fatal(err)
	}
	_, d = s.get("/authorize?" + q.Encode())
	again := d.Find(`[data-testid="consent-agent"] input[name="agent"][value="` + fmt.Sprint(conns[0].ID) + `"]`)
	if _, checked := again.Attr("checked"); !checked || d.Find(`[data-testid="consent-agent-revoked"]`).Length() != 1 {
		t.Fatal("after a revocation, signing in again does not preselect the revoked agent")
	}
	if _, checked := d.Find(`[data-testid="consent-agent-new"] input`).Attr("checked"); checked {
		t.Fatal("after a revocation, a new agent is preselected")
	}
}
