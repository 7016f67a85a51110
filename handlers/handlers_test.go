package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// Helpers for the project and session pages: a signed-in owner's browser,
// agents made with store calls and SQL.

// runListener runs a listener and its mail cache for the test and waits
// until it is connected.
func runListener(t *testing.T, st *store.Store, log *slog.Logger) (*store.Listener, *store.MailCache) {
	l := st.NewListener(log)
	mail := st.NewMailCache(l)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-l.Ready()
	return l, mail
}

const testPassword = "correct horse battery"

// ownerClient is a signed-in owner's browser: its requests return the
// response with the body unread (see doc), and its posts carry the CSRF token.
type ownerClient struct {
	*client
	csrf  string
	owner *store.Owner
}

// owner creates an owner (the first one creates the workspace; a new
// workspace name makes another) and signs them in.
func (a *testApp) owner(email, workspace string) *ownerClient {
	a.t.Helper()
	ctx := context.Background()
	n := store.NewOwner{Email: email, DisplayName: "Owner " + email, Password: testPassword, WorkspaceName: workspace}
	o, err := a.store.CreateOwner(ctx, n)
	if err != nil {
		a.t.Fatal(err)
	}
	c := &ownerClient{client: a.client(), owner: o}
	c.refreshCSRF("/login")
	res := c.post("/login", url.Values{"email": {email}, "password": {testPassword}})
	if res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("sign in: status %d", res.StatusCode)
	}
	c.refreshCSRF("/")
	return c
}

func (c *ownerClient) refreshCSRF(path string) {
	c.app.t.Helper()
	doc := c.doc(c.get(path), http.StatusOK)
	tok, ok := doc.Find(`input[name="_csrf"]`).First().Attr("value")
	if !ok || tok == "" {
		c.app.t.Fatalf("no CSRF token on %s", path)
	}
	c.csrf = tok
}

func (c *ownerClient) do(req *http.Request) *http.Response {
	c.app.t.Helper()
	res, err := c.http.Do(req)
	if err != nil {
		c.app.t.Fatal(err)
	}
	c.app.t.Cleanup(func() { res.Body.Close() })
	return res
}

func (c *ownerClient) get(path string) *http.Response {
	req, _ := http.NewRequest(http.MethodGet, c.app.srv.URL+path, nil)
	return c.do(req)
}

// htmx sends a GET the way htmx does.
func (c *ownerClient) htmx(path string) *http.Response {
	req, _ := http.NewRequest(http.MethodGet, c.app.srv.URL+path, nil)
	req.Header.Set("HX-Request", "true")
	return c.do(req)
}

// post submits a form with the CSRF token.
func (c *ownerClient) post(path string, form url.Values) *http.Response {
	if form == nil {
		form = url.Values{}
	}
	if c.csrf != "" && form.Get("_csrf") == "" {
		form.Set("_csrf", c.csrf)
	}
	return c.postRaw(path, form, false)
}

// postHTMX submits a form as htmx does (token in the header).
func (c *ownerClient) postHTMX(path string, form url.Values) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, c.app.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", c.csrf)
	return c.do(req)
}

func (c *ownerClient) postRaw(path string, form url.Values, htmx bool) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, c.app.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if htmx {
		req.Header.Set("HX-Request", "true")
	}
	return c.do(req)
}

// doc parses a response after checking its status.
func (c *ownerClient) doc(res *http.Response, status int) *goquery.Document {
	c.app.t.Helper()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		c.app.t.Fatalf("%s %s: status %d, want %d\n%s", res.Request.Method, res.Request.URL.Path, res.StatusCode, status, truncate(string(body)))
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		c.app.t.Fatal(err)
	}
	return doc
}

func truncate(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// agent is a connection with a claimed profile, made with the store calls
// the MCP tools use.
type agent struct {
	connID      int64
	workspaceID int64
	slug        string
	handle      string
	name        string
	// token is the connection's bearer token for /mcp.
	token string
}

func (a *testApp) agent(ownerEmail, project, handle, displayName string) agent {
	a.t.Helper()
	ctx := context.Background()
	var projects []string
	if project != "" {
		projects = []string{project}
	}
	tok, err := a.store.CreateStaticToken(ctx, store.StaticTokenRequest{OwnerEmail: ownerEmail, ClientName: "Test client",
		Scopes: store.AllScopes, ProjectNames: projects, Resource: a.srv.URL + "/mcp"})
	if err != nil {
		a.t.Fatal(err)
	}
	// The token's first use, as /mcp makes it, gives the workspace and marks the agent seen.
	ti, err := a.store.UseAccessToken(ctx, tok.Token, a.srv.URL+"/mcp")
	if err != nil {
		a.t.Fatal(err)
	}
	p, err := a.store.ClaimProfile(ctx, ti.WorkspaceID, tok.ConnectionID, handle, displayName)
	if err != nil {
		a.t.Fatal(err)
	}
	return agent{connID: tok.ConnectionID, workspaceID: ti.WorkspaceID, slug: p.SenderSlug, handle: handle, name: displayName, token: tok.Token}
}

// invite invites the agent to the session as a contributor.
func (a *testApp) invite(session *store.Session, ag agent) {
	a.t.Helper()
	if err := a.store.Invite(context.Background(), session.WorkspaceID, session.ID, ag.connID, store.RoleContributor); err != nil {
		a.t.Fatal(err)
	}
}

// sql reaches the test's database directly (storetest.Fixtures).
func (a *testApp) sql() *storetest.Fixtures { return storetest.SQL(a.t, a.store) }

// setStatus sets all three status fields as set_status does (nil clears).
func (a *testApp) setStatus(ag agent, repo, branch, task *string) {
	a.t.Helper()
	_, err := a.store.SetStatus(context.Background(), ag.workspaceID, ag.connID, store.StatusUpdate{
		Repo: store.StatusField{Set: true, Value: repo}, Branch: store.StatusField{Set: true, Value: branch},
		Task: store.StatusField{Set: true, Value: task}})
	if err != nil {
		a.t.Fatal(err)
	}
}

// agentNote posts a note from the agent to the whole session, as
// post_session_note does (the agent must be invited).
func (a *testApp) agentNote(ag agent, sessionID int64, subject, body string) int64 {
	a.t.Helper()
	ctx := context.Background()
	session, err := a.store.GetSession(ctx, ag.workspaceID, sessionID)
	if err != nil {
		a.t.Fatal(err)
	}
	n, _, err := a.store.PostAgentNote(ctx, store.AgentNote{WorkspaceID: ag.workspaceID, ConnectionID: ag.connID,
		SessionType: session.Type, SessionID: session.PublicID, Subject: subject, Body: body, IdempotencyKey: fmt.Sprintf("k-%d", noteKeys.Add(1))})
	if err != nil {
		a.t.Fatal(err)
	}
	a.store.FlushNotifications() // what the test does next comes after the note is announced
	return n.ID
}

var noteKeys atomic.Int64

// project and session create what the pages need, through the store.
func (c *ownerClient) project(name string) *store.Project {
	c.app.t.Helper()
	p, err := c.app.store.CreateProject(context.Background(), c.owner.WorkspaceID, name)
	if err != nil {
		c.app.t.Fatal(err)
	}
	return p
}

func (c *ownerClient) session(p *store.Project, title string) *store.Session {
	c.app.t.Helper()
	session, err := c.app.store.CreateSession(context.Background(), store.NewSession{WorkspaceID: c.owner.WorkspaceID, ProjectID: p.ID,
		Type: "team_session", Title: title, CreatedBy: c.owner.ID})
	if err != nil {
		c.app.t.Fatal(err)
	}
	return session
}

// sessionFixture is a signed-in owner with a project, a session and an
// agent seated and invited there.
type sessionFixture struct {
	app     *testApp
	alice   *ownerClient
	p       *store.Project
	session *store.Session
	ag      agent
	url     string
}

func newSessionFixture(t *testing.T) *sessionFixture {
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")
	p := alice.project("Site")
	session := alice.session(p, "Release week")
	f := &sessionFixture{app: app, alice: alice, p: p, session: session, url: fmt.Sprintf("/sessions/%d", session.ID)}
	f.ag = f.invitedAgent("claude-1", "Claude "+xss)
	return f
}

// invitedAgent makes an agent of alice's seated in the fixture's project and
// invited to its session.
func (f *sessionFixture) invitedAgent(handle, displayName string) agent {
	f.app.t.Helper()
	ag := f.app.agent("alice@example.com", f.p.Name, handle, displayName)
	f.app.invite(f.session, ag)
	return ag
}

func noteIDs(doc *goquery.Document) []int64 {
	var ids []int64
	doc.Find(`[data-testid="note"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := strconv.ParseInt(s.AttrOr("data-note-id", ""), 10, 64)
		ids = append(ids, id)
	})
	return ids
}
