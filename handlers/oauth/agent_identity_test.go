package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// register registers a public client named name with one redirect URI, as
// an MCP client does on its first sign-in (some on every sign-in).
func (e *env) register(name, redirect string) string {
	e.t.Helper()
	resp, out := e.jsonPost("/register", map[string]any{
		"client_name": name, "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
	})
	if resp.StatusCode != http.StatusCreated {
		e.t.Fatalf("register: %d %v", resp.StatusCode, out)
	}
	return out["client_id"].(string)
}

// signInAs runs the consent for clientID choosing agent (views.AgentNew,
// a connection id, or "" for what the page preselects) and exchanges the
// code. It returns the consent page it saw and the token response.
func (e *env) signInAs(clientID, redirect, agent string) (*goquery.Document, map[string]any) {
	e.t.Helper()
	verifier, challenge := pkce(clientID[len(clientID)-4:])
	_, d := e.consent(e.authParams(clientID, redirect, challenge))
	resp := e.submitAgent(d, agent)
	if resp.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("consent as %q: %d", agent, resp.StatusCode)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	resp, tok := e.exchange(clientID, loc.Query().Get("code"), verifier, redirect)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("exchange: %d %v", resp.StatusCode, tok)
	}
	return d, tok
}

// submitAgent approves the consent page d with every scope, choosing agent
// ("" keeps what the page preselected).
func (e *env) submitAgent(d *goquery.Document, agent string) *http.Response {
	e.t.Helper()
	f := url.Values{}
	d.Find(`form[data-testid="consent-form"] input[type="hidden"], form[data-testid="consent-form"] input[type="radio"][checked]`).Each(func(_ int, s *goquery.Selection) {
		f.Add(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	if agent != "" {
		f.Set("agent", agent)
	}
	f["grant"] = []string{store.ScopeRead, store.ScopeWrite}
	f.Set("decision", "approve")
	resp, err := e.browser.PostForm(e.base+"/authorize", f)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// choices are the agents a consent page offers: the handle (or client
// name) of each "Sign in again as", with " (revoked)" when it is, then
// "new"; the preselected one starts with "*".
func choices(d *goquery.Document) []string {
	var out []string
	d.Find(`[data-testid="consent-agents"] input[name="agent"]`).Each(func(_ int, s *goquery.Selection) {
		label := "new"
		if v := s.AttrOr("value", ""); v != "new" {
			row := s.Closest(`[data-testid="consent-agent"]`)
			label = row.Find(`[data-testid="consent-agent-handle"]`).Text()
			if row.Find(`[data-testid="consent-agent-revoked"]`).Length() > 0 {
				label += " (revoked)"
			}
		}
		if _, ok := s.Attr("checked"); ok {
			label = "*" + label
		}
		out = append(out, label)
	})
	return out
}

// TestThreeAgentsOfOneClientAreThreeConnections: three agents of one
// client software (the same client name and redirect, each its own
// registration, as three Claude Code checkouts) signing in are three
// connections with their own handles and sender slugs. A fourth sign-in is
// offered "Sign in again as" each of them beside a new agent (preselected:
// its registration holds none); choosing one continues it: same
// connection, profile and slug. A sign-in by a registration that already
// holds a connection preselects it. A revoked connection is listed as
// revoked, its handle is refused to a new agent with the way back named,
// and "Sign in again as" it revives it with its slug and invitations.
func TestThreeAgentsOfOneClientAreThreeConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signIn()
	m := e.mcpEndpoint()
	ctx := context.Background()
	const name, redirect = "Claude Code", "http://localhost:3142/callback"
	p, err := e.st.CreateProject(ctx, e.owner.WorkspaceID, "Shop")
	if err != nil {
		t.Fatal(err)
	}
	session, err := e.st.CreateSession(ctx, store.NewSession{WorkspaceID: e.owner.WorkspaceID, ProjectID: p.ID, Type: "team_session", Title: "Checkout"})
	if err != nil {
		t.Fatal(err)
	}

	type signedIn struct {
		client string
		conn   int64
		token  string
		slug   string
	}
	claim := func(token, handle string) (string, map[string]any) {
		t.Helper()
		_, _, res := m.call(token, "claim_connected_profile", map[string]any{"handle": handle, "display_name": handle})
		sc, _ := res["structuredContent"].(map[string]any)
		slug, _ := sc["sender_slug"].(string)
		return slug, res
	}
	var agents []signedIn
	for i, handle := range []string{"ada-claude", "bob-claude", "cora-claude"} {
		client := e.register(name, redirect)
		d, tok := e.signInAs(client, redirect, "")
		if got := choices(d); i == 0 && len(got) != 0 || i > 0 && (len(got) != i+1 || got[i] != "*new") {
			t.Fatalf("sign-in %d is offered %v, want the %d earlier agents and *new (no question for the first)", i+1, got, i)
		}
		ti, ok := e.verify(tok["access_token"].(string))
		if !ok {
			t.Fatal("token refused")
		}
		slug, res := claim(tok["access_token"].(string), handle)
		if slug != "ext-"+handle {
			t.Fatalf("claim %s: %v", handle, res)
		}
		if err := e.st.Invite(ctx, e.owner.WorkspaceID, session.ID, ti.ConnectionID, store.RoleRunner); err != nil {
			t.Fatal(err)
		}
		agents = append(agents, signedIn{client, ti.ConnectionID, tok["access_token"].(string), slug})
	}
	if agents[0].conn == agents[1].conn || agents[1].conn == agents[2].conn || agents[0].conn == agents[2].conn {
		t.Fatalf("three sign-ins, connections %d %d %d", agents[0].conn, agents[1].conn, agents[2].conn)
	}
	_, d := e.doc("/connections")
	if n := d.Find(`[data-testid="connection"]`).Length(); n != 3 {
		t.Fatalf("Connections page lists %d connections, want 3", n)
	}

	t.Run("a new registration signs in again as bob", func(t *testing.T) {
		client := e.register(name, redirect)
		d, tok := e.signInAs(client, redirect, strconv.FormatInt(agents[1].conn, 10))
		if got := strings.Join(choices(d), " "); !strings.Contains(got, "@bob-claude") || !strings.HasSuffix(got, "*new") {
			t.Fatalf("offered %s", got)
		}
		ti, _ := e.verify(tok["access_token"].(string))
		if ti == nil || ti.ConnectionID != agents[1].conn {
			t.Fatalf("signed in as %+v, want connection %d", ti, agents[1].conn)
		}
		if slug, res := claim(tok["access_token"].(string), "bob-claude"); slug != agents[1].slug {
			t.Fatalf("bob's slug after signing in again: %v", res)
		}
		// The earlier sign-in's token still works: nothing revoked it.
		if _, ok := e.verify(agents[1].token); !ok {
			t.Fatal("signing in again ended bob's earlier token")
		}
	})

	t.Run("a registration that holds a connection is preselected to it", func(t *testing.T) {
		d, tok := e.signInAs(agents[0].client, redirect, "")
		if got := choices(d); got[0] != "*@ada-claude" {
			t.Fatalf("offered %v, want ada preselected first", got)
		}
		if ti, _ := e.verify(tok["access_token"].(string)); ti == nil || ti.ConnectionID != agents[0].conn {
			t.Fatalf("signed in as %+v", ti)
		}
	})

	t.Run("a revoked agent signs in again", func(t *testing.T) {
		cora := agents[2]
		if err := e.st.RevokeConnection(ctx, e.owner.WorkspaceID, cora.conn); err != nil {
			t.Fatal(err)
		}
		// A new agent may not take the revoked agent's handle; the refusal
		// names the way back.
		_, tok := e.signInAs(e.register(name, redirect), redirect, "new")
		_, res := claim(tok["access_token"].(string), "cora-claude")
		msg := res["content"].([]any)[0].(map[string]any)["text"].(string)
		if res["isError"] != true || !strings.Contains(msg, "revoked") || !strings.Contains(msg, `"Sign in again as @cora-claude"`) {
			t.Fatalf("claiming a revoked agent's handle: %v", res)
		}

		d, tok := e.signInAs(cora.client, redirect, strconv.FormatInt(cora.conn, 10))
		// From the same checkout (its registration) the way back is
		// preselected, so a quick Approve makes no duplicate.
		if got := strings.Join(choices(d), " "); !strings.Contains(got, "*@cora-claude (revoked)") {
			t.Fatalf("offered %s: cora must be listed revoked and preselected", got)
		}
		ti, ok := e.verify(tok["access_token"].(string))
		if !ok || ti.ConnectionID != cora.conn {
			t.Fatalf("revived as %+v", ti)
		}
		if c := e.connection(cora.conn); c.RevokedAt != nil {
			t.Fatal("still revoked")
		}
		if slug, res := claim(tok["access_token"].(string), "cora-claude"); slug != cora.slug {
			t.Fatalf("cora's slug after revival: %v", res)
		}
		if role, err := e.st.InvitationRole(ctx, e.owner.WorkspaceID, session.ID, cora.conn); err != nil || role != store.RoleRunner {
			t.Fatalf("cora's invitation after revival: %q %v", role, err)
		}
		if _, ok := e.verify(cora.token); ok {
			t.Fatal("the token revoked with the connection works again")
		}
	})

	t.Run("the choice is checked on the server", func(t *testing.T) {
		sql := storetest.SQL(t, e.st)
		// Another owner of the workspace, another workspace, another client software.
		var other int64
		if err := sql.QueryRow(`INSERT INTO owners (workspace_id, email, display_name, password_hash)
			VALUES ($1, 'other@example.com', 'Other', '$argon2id$fixture') RETURNING id`, e.owner.WorkspaceID).Scan(&other); err != nil {
			t.Fatal(err)
		}
		ws2, owner2 := sql.InsertWorkspace("Elsewhere")
		client := e.register(name, redirect)
		otherClient := e.register("Another client", redirect)
		var refused []int64
		for _, n := range []store.NewConnection{
			{WorkspaceID: e.owner.WorkspaceID, OwnerID: other, ClientID: &client, ClientName: name, Scopes: store.AllScopes},
			{WorkspaceID: ws2, OwnerID: owner2, ClientID: &client, ClientName: name, Scopes: store.AllScopes},
			{WorkspaceID: e.owner.WorkspaceID, OwnerID: e.owner.ID, ClientID: &otherClient, ClientName: "Another client", Scopes: store.AllScopes},
			{WorkspaceID: e.owner.WorkspaceID, OwnerID: e.owner.ID, ClientName: name, Scopes: store.AllScopes}, // a static token
		} {
			c, err := e.st.CreateConnection(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			refused = append(refused, c.ID)
		}
		_, challenge := pkce("zzzz")
		for _, id := range append(refused, 1<<40) {
			_, d := e.consent(e.authParams(client, redirect, challenge))
			resp, err := e.browser.PostForm(e.base+"/authorize", func() url.Values {
				f := url.Values{}
				d.Find(`form[data-testid="consent-form"] input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
					f.Add(s.AttrOr("name", ""), s.AttrOr("value", ""))
				})
				f.Set("agent", strconv.FormatInt(id, 10))
				f.Set("decision", "approve")
				return f
			}())
			if err != nil {
				t.Fatal(err)
			}
			page, _ := goquery.NewDocumentFromReader(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page.Find(`[data-testid="consent-error"]`).Text(), "cannot sign in again") {
				t.Fatalf("continuing connection %d: %d %q", id, resp.StatusCode, page.Find(`[data-testid="consent-error"]`).Text())
			}
		}
		var moved int
		if err := sql.QueryRow(`SELECT count(*) FROM connections WHERE id = ANY($1) AND client_id IS NOT DISTINCT FROM $2 AND owner_id = $3`,
			refused, client, e.owner.ID).Scan(&moved); err != nil || moved != 0 {
			t.Fatalf("%d refused connections were taken over (%v)", moved, err)
		}
		// No choice at all is asked for again.
		_, d := e.consent(e.authParams(client, redirect, challenge))
		f := url.Values{}
		d.Find(`form[data-testid="consent-form"] input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
			f.Add(s.AttrOr("name", ""), s.AttrOr("value", ""))
		})
		f.Set("decision", "approve")
		resp, err := e.browser.PostForm(e.base+"/authorize", f)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("approval without choosing the agent: %d", resp.StatusCode)
		}
	})
}
