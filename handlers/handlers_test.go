package handlers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/jackc/pgx/v5"

	"github.com/osfoundry/osfoundry/store"
)

// Helpers for the project and session pages: a signed-in owner's browser,
// agents made with store calls and SQL, and a query counter.

// queryCounter counts the statements sent through the pool.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	q.n.Add(1)
	return ctx
}
func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// runHub runs a note hub for the test and waits until it listens.
func runHub(t *testing.T, st *store.Store, log *slog.Logger) *store.NoteHub {
	hub := st.NewNoteHub(log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); hub.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-hub.Ready()
	return hub
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
	var o *store.Owner
	var err error
	if has, _ := a.store.HasOwner(ctx); !has {
		o, err = a.store.CreateFirstOwner(ctx, n)
	} else {
		o, err = a.store.CreateOwner(ctx, n)
	}
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

// agent is a connection with a claimed profile, made with store calls and
// SQL until the MCP tools can be called from tests.
type agent struct {
	connID int64
	slug   string
	handle string
	name   string
}

func (a *testApp) agent(ownerEmail, project, handle, displayName string) agent {
	a.t.Helper()
	ctx := context.Background()
	var projects []string
	if project != "" {
		projects = []string{project}
	}
	tok, err := a.store.CreateStaticToken(ctx, store.StaticTokenRequest{OwnerEmail: ownerEmail, ClientName: "Test client",
		Scopes: store.AllScopes, ProjectNames: projects, Resource: "http://localhost/mcp"})
	if err != nil {
		a.t.Fatal(err)
	}
	ag := agent{connID: tok.ConnectionID, slug: "ext-" + handle, handle: handle, name: displayName}
	a.exec(`INSERT INTO agent_profiles (connection_id, workspace_id, handle, display_name)
		SELECT id, workspace_id, $2, $3 FROM connections WHERE id = $1`, ag.connID, handle, displayName)
	a.exec(`UPDATE connections SET sender_slug = $2, last_seen_at = now() WHERE id = $1`, ag.connID, ag.slug)
	return ag
}

func (a *testApp) exec(sql string, args ...any) {
	a.t.Helper()
	if _, err := a.store.Pool().Exec(context.Background(), sql, args...); err != nil {
		a.t.Fatal(err)
	}
}

// setStatus writes an agent's status directly.
func (a *testApp) setStatus(ag agent, repo, branch, task *string) {
	a.t.Helper()
	a.exec(`INSERT INTO statuses (connection_id, repo, branch, task) VALUES ($1, $2, $3, $4)
		ON CONFLICT (connection_id) DO UPDATE SET repo = $2, branch = $3, task = $4, updated_at = now()`, ag.connID, repo, branch, task)
}

// agentNote posts a note from the agent to the whole session, with the
// notification the store sends.
func (a *testApp) agentNote(ag agent, sessionID int64, subject, body string) int64 {
	a.t.Helper()
	var id int64
	err := a.store.Pool().QueryRow(context.Background(), `
		WITH n AS (
			INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name, message_type, subject, body, idempotency_key)
			SELECT c.workspace_id, $2, 'agent', c.id, c.sender_slug, p.display_name, 'note', $3, $4, gen_random_uuid()::text
			FROM connections c JOIN agent_profiles p ON p.connection_id = c.id WHERE c.id = $1
			RETURNING id, session_id)
		SELECT n.id FROM n, LATERAL (SELECT pg_notify($5, n.session_id || ':' || n.id)) x`,
		ag.connID, sessionID, subject, body, store.NotesChannel).Scan(&id)
	if err != nil {
		a.t.Fatal(err)
	}
	return id
}

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
	x, err := c.app.store.CreateSession(context.Background(), store.NewSession{WorkspaceID: c.owner.WorkspaceID, ProjectID: p.ID,
		Type: "team_session", Title: title, CreatedBy: c.owner.ID})
	if err != nil {
		c.app.t.Fatal(err)
	}
	return x
}

func ptr(s string) *string { return &s }
