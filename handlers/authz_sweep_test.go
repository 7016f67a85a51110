package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// The authorization sweep: every route of routes.go and every MCP tool,
// called by everyone who must be refused, each checked for the right
// refusal, for none of another workspace's data in the answer, and for
// nothing changed in the database.

// sweepWorld is workspace A (alice: a project, a session, an agent seated and
// invited there with a note and a status, a second connection that is neither
// seated nor invited, a read-only connection) and workspace B (bob and his
// agent). Every name in A is distinctive, so it can be looked for in answers.
type sweepWorld struct {
	app        *testApp
	alice      *ownerClient
	bob        *ownerClient
	p          *store.Project
	session    *store.Session
	ag         agent // A's agent, seated in p and invited to the session
	note       int64 // ag's note in the session
	bobP       *store.Project
	bobSession *store.Session
	bobAg      agent                  // B's agent
	stranger   agent                  // A's connection, neither seated nor invited
	hook       *store.WebhookEndpoint // A's webhook endpoint in p, with ag's note queued
	readOnly   string
	clientID   string // a registered OAuth client
}

// A's distinctive strings: none may reach another workspace.
const (
	secretProject = "Orchid-Project-A"
	secretSession = "Quartz-Session-A"
	secretSubject = "Saffron-Note-A"
	secretBody    = "Vermilion-Body-A"
	secretHandle  = "amber-agent-a"
	secretName    = "Amber Display A"
	secretTask    = "Cobalt-Task-A"
	secretClient  = "Jade-Client-A"
	secretHook    = "Garnet-Hook-A"
)

// secretsOfA is what an owner or agent of another workspace must never see.
var secretsOfA = []string{secretProject, secretSession, secretSubject, secretBody, secretHandle, secretName, secretTask, secretClient, secretHook}

func newSweepWorld(t *testing.T) *sweepWorld {
	app := newTestApp(t)
	ctx := context.Background()
	w := &sweepWorld{app: app}
	w.alice = app.owner("alice@example.com", "")
	w.bob = app.owner("bob@example.com", "Bob's")
	w.p = w.alice.project(secretProject)
	w.session = w.alice.session(w.p, secretSession)
	w.ag = app.agent("alice@example.com", secretProject, secretHandle, secretName)
	app.invite(w.session, w.ag)
	app.sql().Exec(`UPDATE connections SET client_name = $1 WHERE id = $2`, secretClient, w.ag.connID)
	app.setStatus(w.ag, new("acme/site"), new("main"), new(secretTask))
	hook, _, err := app.store.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: w.alice.owner.WorkspaceID, ProjectID: w.p.ID,
		URL: "https://hooks.example.com/" + secretHook, Kind: store.WebhookJSON})
	if err != nil {
		t.Fatal(err)
	}
	w.hook = hook
	w.note = app.agentNote(w.ag, w.session.ID, secretSubject, secretBody)
	// Alice has the session open: the mail cache follows it, so polls of it
	// take the fast path that asks no database.
	w.alice.doc(w.alice.get(fmt.Sprintf("/sessions/%d", w.session.ID)), http.StatusOK)
	w.bobP = w.bob.project("Bob project")
	w.bobSession = w.bob.session(w.bobP, "Bob session")
	w.bobAg = app.agent("bob@example.com", "Bob project", "bee-agent", "Bee")
	w.stranger = app.agent("alice@example.com", "", "stranger-agent", "Stranger")
	ro, err := app.store.CreateStaticToken(ctx, store.StaticTokenRequest{OwnerEmail: "alice@example.com", ClientName: "Read only",
		Scopes: []string{store.ScopeRead}, ProjectNames: []string{secretProject}, Resource: app.srv.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.store.Invite(ctx, w.alice.owner.WorkspaceID, w.session.ID, ro.ConnectionID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	w.readOnly = ro.Token
	w.clientID = "sweep-client"
	if err := app.store.CreateOAuthClient(ctx, &store.OAuthClient{ClientID: w.clientID, ClientName: "Sweep client",
		RedirectURIs: []string{"http://127.0.0.1/cb"}, TokenEndpointAuthMethod: "none"}, "test"); err != nil {
		t.Fatal(err)
	}
	return w
}

// authorizeQuery is a valid authorization request of the registered client.
func (w *sweepWorld) authorizeQuery() url.Values {
	return url.Values{
		"client_id": {w.clientID}, "redirect_uri": {"http://127.0.0.1/cb"}, "response_type": {"code"},
		"state": {"s1"}, "code_challenge": {strings.Repeat("a", 43)}, "code_challenge_method": {"S256"},
		"resource": {w.app.srv.URL + "/mcp"}, "scope": {"osfoundry:read osfoundry:write"},
	}
}

// path fills a route's parameters with the ids of workspace A's objects.
func (w *sweepWorld) path(r route) string {
	return w.fill(r, w.p, w.session, w.ag.connID)
}

// bobPath fills a route's parameters with bob's own project, session and
// agent, except :conn and :hook, which name A's agent and A's webhook
// endpoint: ids of two workspaces mixed.
func (w *sweepWorld) bobPath(r route) string {
	return w.fill(r, w.bobP, w.bobSession, w.bobAg.connID)
}

// fill fills a route's :id with p, session or conn (by the route's area),
// its :conn and :hook with A's agent and A's webhook endpoint, and a
// wildcard with a static file.
func (w *sweepWorld) fill(r route, p *store.Project, session *store.Session, conn int64) string {
	path := r.path
	switch {
	case strings.HasPrefix(path, "/projects/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(p.ID), 1)
	case strings.HasPrefix(path, "/sessions/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(session.ID), 1)
	case strings.HasPrefix(path, "/connections/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(conn), 1)
	}
	path = strings.Replace(path, ":conn", fmt.Sprint(w.ag.connID), 1)
	path = strings.Replace(path, ":hook", fmt.Sprint(w.hook.ID), 1)
	return strings.Replace(path, "*", "0/app.css", 1)
}

// digest fingerprints the rows of the database: of workspace ws only when ws
// is not 0 (tables without a workspace_id are left out then), of the named
// tables only when any are named. login_failures (the sign-in throttle's
// counter) is never part of it.
func (a *testApp) digest(ws int64, only ...string) string {
	a.t.Helper()
	db := a.sql()
	rows := db.Query(`
		SELECT table_name::text, bool_or(column_name = 'workspace_id')
		FROM information_schema.columns WHERE table_schema = current_schema()
		GROUP BY table_name ORDER BY table_name`)
	type table struct {
		name  string
		scope bool
	}
	var tables []table
	for rows.Next() {
		var tb table
		if err := rows.Scan(&tb.name, &tb.scope); err != nil {
			a.t.Fatal(err)
		}
		tables = append(tables, tb)
	}
	if err := rows.Err(); err != nil {
		a.t.Fatal(err)
	}
	var b strings.Builder
	for _, tb := range tables {
		if tb.name == "login_failures" || len(only) > 0 && !slices.Contains(only, tb.name) {
			continue
		}
		q := fmt.Sprintf(`SELECT coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM %q t`, tb.name)
		var args []any
		switch {
		case ws == 0:
		case tb.scope:
			q += ` WHERE workspace_id = $1`
			args = append(args, ws)
		case tb.name == "workspaces":
			q += ` WHERE id = $1`
			args = append(args, ws)
		default:
			continue
		}
		var sum string
		if err := db.QueryRow(q, args...).Scan(&sum); err != nil {
			a.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s:%s\n", tb.name, sum)
	}
	return b.String()
}

// sweepRoute is one route's row in the sweep.
type sweepRoute struct {
	// public says why the route needs no signed-in owner; empty for web and
	// owner routes.
	public string
	query  string     // appended to the path
	form   url.Values // what a POST sends (the CSRF token is added or not per caller)
	// other is the status an owner of another workspace gets with A's ids
	// (0: 404, never 403).
	other int
	// signedOut is the status a signed-out visitor holding a valid CSRF token
	// gets (0: a redirect to /login).
	signedOut int
	// signsOut marks a route that ends the caller's session: swept last.
	signsOut bool
}

func (w *sweepWorld) routeTable() map[string]sweepRoute {
	q := w.authorizeQuery()
	approve := url.Values{"decision": {"approve"}, "grant": {store.ScopeRead, store.ScopeWrite}, "project": {fmt.Sprint(w.p.ID)}}
	for k, v := range q {
		approve[k] = v
	}
	conn := fmt.Sprint(w.ag.connID)
	const (
		probe    = "an operations probe for load balancers; it reports liveness or readiness and nothing about any workspace"
		cors     = "a CORS preflight: headers only, no data"
		resource = "RFC 9728 protected-resource metadata: public by definition, so clients can find the authorization server"
		asMeta   = "RFC 8414 authorization-server metadata: public by definition"
		mcpEntry = "the MCP endpoint checks bearer tokens itself: initialize and tools/list answer anyone (docs/mcp.md), every tools/call is swept below"
	)
	return map[string]sweepRoute{
		"GET /healthz":  {public: probe},
		"GET /readyz":   {public: probe},
		"GET /static/*": {public: "embedded CSS, scripts and icons, the same for everyone"},

		"POST /mcp":    {public: mcpEntry},
		"GET /mcp":     {public: "stateless MCP has no stream to open: refused without data"},
		"DELETE /mcp":  {public: "stateless MCP has no session to delete: refused without data"},
		"OPTIONS /mcp": {public: cors},
		"GET /.well-known/oauth-protected-resource":         {public: resource},
		"GET /.well-known/oauth-protected-resource/mcp":     {public: resource},
		"OPTIONS /.well-known/oauth-protected-resource":     {public: cors},
		"OPTIONS /.well-known/oauth-protected-resource/mcp": {public: cors},

		"GET /.well-known/oauth-authorization-server":     {public: asMeta},
		"OPTIONS /.well-known/oauth-authorization-server": {public: cors},
		"GET /.well-known/openid-configuration":           {public: asMeta},
		"OPTIONS /.well-known/openid-configuration":       {public: cors},
		"POST /register":    {public: "RFC 7591 dynamic registration is open to any MCP client (throttled per address); a client gets no access until an owner approves it"},
		"OPTIONS /register": {public: cors},
		"POST /token":       {public: "clients prove themselves with the code and PKCE verifier, a refresh token or a client secret, never a cookie"},
		"OPTIONS /token":    {public: cors},
		"POST /revoke":      {public: "RFC 7009: the token being revoked is the credential"},
		"OPTIONS /revoke":   {public: cors},

		// Bob sees the consent page with his own projects only; approving
		// with a project of A is refused.
		"GET /authorize":  {query: "?" + q.Encode(), other: http.StatusOK},
		"POST /authorize": {form: approve, other: http.StatusUnprocessableEntity},
		// With an owner already there, setup sends everyone to sign in.
		"GET /setup":   {other: http.StatusSeeOther},
		"POST /setup":  {form: url.Values{"email": {"mallory@example.com"}, "display_name": {"M"}, "password": {testPassword}, "workspace": {"M"}}, other: http.StatusSeeOther},
		"GET /login":   {other: http.StatusSeeOther, signedOut: http.StatusOK},
		"POST /login":  {form: url.Values{"email": {"nobody@example.com"}, "password": {"wrong password"}}, other: http.StatusUnauthorized, signedOut: http.StatusUnauthorized},
		"POST /logout": {other: http.StatusSeeOther, signsOut: true},

		// Routes without ids act on the caller's own workspace.
		"GET /":              {other: http.StatusOK},
		"POST /projects":     {form: url.Values{"name": {"Bob's second"}}, other: http.StatusSeeOther},
		"GET /connections":   {other: http.StatusOK},
		"GET /unread/stream": {other: http.StatusOK},
		"POST /connections/tokens": {form: url.Values{"client_name": {"Sneaky"}, "scope": {store.ScopeRead}, "project": {fmt.Sprint(w.p.ID)}},
			other: http.StatusUnprocessableEntity},

		// Routes with A's ids: not found for anyone else.
		"GET /projects/:id":                           {},
		"POST /projects/:id/rename":                   {form: url.Values{"name": {"Hijacked"}}},
		"POST /projects/:id/seats":                    {form: url.Values{"handle": {"bee-agent"}}},
		"POST /projects/:id/seats/:conn/remove":       {},
		"POST /projects/:id/sessions":                 {form: url.Values{"session_type": {"team_session"}, "title": {"Hijacked"}}},
		"GET /projects/:id/webhooks":                  {},
		"POST /projects/:id/webhooks":                 {form: url.Values{"url": {"https://hooks.example.com/hijack"}, "kind": {store.WebhookJSON}}},
		"GET /projects/:id/webhooks/:hook":            {},
		"GET /projects/:id/webhooks/:hook/log":        {},
		"POST /projects/:id/webhooks/:hook/test":      {},
		"POST /projects/:id/webhooks/:hook/enable":    {},
		"POST /projects/:id/webhooks/:hook/disable":   {},
		"POST /projects/:id/webhooks/:hook/delete":    {},
		"GET /sessions/:id":                           {},
		"GET /sessions/:id/stream":                    {query: "?after=0"},
		"GET /sessions/:id/mail/poll":                 {query: "?after=0"},
		"POST /sessions/:id/mail/read":                {form: url.Values{"upto": {fmt.Sprint(w.note)}}},
		"GET /sessions/:id/mail/older":                {query: fmt.Sprintf("?before=%d", w.note+1)},
		"GET /sessions/:id/presence":                  {query: "?v=x"},
		"GET /sessions/:id/compose":                   {query: fmt.Sprintf("?reply_to=%d", w.note)},
		"POST /sessions/:id/mail":                     {form: url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(w.note)}, "subject": {"x"}, "body": {"Hijacked"}}},
		"GET /sessions/:id/participants":              {},
		"POST /sessions/:id/invitations":              {form: url.Values{"connection_id": {conn}, "role": {store.RoleRunner}}},
		"POST /sessions/:id/invitations/:conn":        {form: url.Values{"role": {store.RoleRunner}}},
		"POST /sessions/:id/invitations/:conn/remove": {},
		"GET /connections/:id/revoke":                 {},
		"POST /connections/:id/revoke":                {},
	}
}

// sweepCall is one answer, read whole.
type sweepCall struct {
	status   int
	location string
	body     string
}

func (c sweepCall) String() string {
	return fmt.Sprintf("status %d, location %q: %s", c.status, c.location, truncate(c.body))
}

// request sends one request of the sweep through hc; csrf is sent in the
// form (POST) when not empty.
func (w *sweepWorld) request(t *testing.T, hc *http.Client, method, path string, form url.Values, csrf string, htmx bool) sweepCall {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		f := url.Values{}
		for k, v := range form {
			f[k] = v
		}
		if csrf != "" {
			f.Set(csrfField, csrf)
		}
		body = strings.NewReader(f.Encode())
	}
	req, err := http.NewRequest(method, w.app.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if htmx {
		req.Header.Set("HX-Request", "true")
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return sweepCall{status: res.StatusCode, location: res.Header.Get("Location"), body: string(readBody(res))}
}

// noSecrets fails when an answer holds any of A's distinctive strings.
func noSecrets(t *testing.T, what, body string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(body, s) {
			t.Errorf("%s: the answer holds %q of workspace A:\n%s", what, s, truncate(body))
		}
	}
}

func isLoginRedirect(c sweepCall) bool {
	return (c.status == http.StatusSeeOther || c.status == http.StatusFound) && strings.HasPrefix(c.location, "/login")
}

// TestSweepRoutes calls every route of the table as an owner of another
// workspace, signed out, and (for POSTs) without the CSRF token.
func TestSweepRoutes(t *testing.T) {
	t.Parallel()
	w := newSweepWorld(t)
	table := w.routeTable()
	routes := w.app.h.routes()
	seen := map[string]bool{}
	for _, r := range routes {
		key := r.method + " " + r.path
		seen[key] = true
		row, ok := table[key]
		if !ok {
			t.Errorf("route %s (%s) has no row in the authorization sweep: add one", key, r.name)
			continue
		}
		if (r.access == accessPublic) != (row.public != "") {
			t.Errorf("route %s is %q but its sweep row says public=%q", key, r.access, row.public)
		}
	}
	for key := range table {
		if !seen[key] {
			t.Errorf("the sweep has a row for %s, which is not a route any more", key)
		}
	}
	// Routes that end the caller's session go last.
	sort.SliceStable(routes, func(i, j int) bool {
		return !table[routes[i].method+" "+routes[i].path].signsOut && table[routes[j].method+" "+routes[j].path].signsOut
	})
	aliceWS := w.alice.owner.WorkspaceID

	t.Run("public routes say why", func(t *testing.T) {
		anon := w.app.client()
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access != accessPublic {
				continue
			}
			path := w.path(r)
			res := w.request(t, anon.http, r.method, path, nil, "", false)
			if res.status >= 500 || isLoginRedirect(res) {
				t.Errorf("%s %s (public: %s): %s", r.method, path, row.public, res)
			}
			noSecrets(t, r.method+" "+path, res.body, secretsOfA)
		}
	})

	// Bob's own project and session, with A's agent, note or project named
	// inside: never a 403 or a 500, never A's data, never a change in A.
	t.Run("own ids mixed with another workspace's", func(t *testing.T) {
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			// (connections/:id is bob's own connection here: nothing is mixed.)
			if !ok || r.access != accessOwner || !strings.Contains(r.path, ":id") || strings.HasPrefix(r.path, "/connections/") {
				continue
			}
			path := w.bobPath(r) + row.query
			beforeA := w.app.digest(aliceWS)
			res := w.request(t, w.bob.http, r.method, path, row.form, w.bob.csrf, true)
			what := fmt.Sprintf("bob %s %s", r.method, path)
			if res.status >= 500 || res.status == http.StatusForbidden {
				t.Errorf("%s: %s", what, res)
			}
			if (strings.Contains(r.path, ":conn") || strings.Contains(r.path, ":hook")) && res.status != http.StatusNotFound {
				t.Errorf("%s: %s, want 404 for A's connection or webhook endpoint", what, res)
			}
			noSecrets(t, what, res.body, secretsOfA)
			if w.app.digest(aliceWS) != beforeA {
				t.Errorf("%s changed workspace A", what)
			}
		}
	})

	// Bob signs out at the end of this one.
	t.Run("owner of another workspace", func(t *testing.T) {
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access == accessPublic {
				continue
			}
			want := row.other
			if want == 0 {
				want = http.StatusNotFound
			}
			path := w.path(r) + row.query
			for _, htmx := range []bool{false, true} {
				if htmx && r.method != http.MethodGet {
					continue
				}
				beforeA, before := w.app.digest(aliceWS), w.app.digest(0)
				res := w.request(t, w.bob.http, r.method, path, row.form, w.bob.csrf, htmx)
				what := fmt.Sprintf("bob %s %s (htmx %v)", r.method, path, htmx)
				if res.status != want {
					t.Errorf("%s: %s, want %d", what, res, want)
				}
				noSecrets(t, what, res.body, secretsOfA)
				if w.app.digest(aliceWS) != beforeA {
					t.Errorf("%s changed workspace A", what)
				}
				if want == http.StatusNotFound && w.app.digest(0) != before {
					t.Errorf("%s: refused, yet the database changed", what)
				}
			}
		}
	})

	t.Run("signed out", func(t *testing.T) {
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access == accessPublic {
				continue
			}
			path := w.path(r) + row.query
			before := w.app.digest(0)
			anon := w.app.client()
			if r.method == http.MethodPost {
				// No cookie, no token: refused before anything else.
				res := w.request(t, anon.http, r.method, path, row.form, "", false)
				if res.status != http.StatusForbidden {
					t.Errorf("signed out POST %s without a token: %s, want 403", path, res)
				}
				noSecrets(t, "signed out POST "+path, res.body, secretsOfA)
			}
			// A signed-out visitor with a valid token (from the sign-in page).
			tok := anon.csrf("/login")
			res := w.request(t, anon.http, r.method, path, row.form, tok, false)
			what := fmt.Sprintf("signed out %s %s", r.method, path)
			switch {
			case row.signedOut != 0 && res.status != row.signedOut:
				t.Errorf("%s: %s, want %d", what, res, row.signedOut)
			case row.signedOut == 0 && !isLoginRedirect(res):
				t.Errorf("%s: %s, want a redirect to /login", what, res)
			}
			noSecrets(t, what, res.body, secretsOfA)
			if w.app.digest(0) != before {
				t.Errorf("%s changed the database", what)
			}
		}
	})

	t.Run("CSRF", func(t *testing.T) {
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access == accessPublic || r.method != http.MethodPost {
				continue
			}
			path := w.path(r) + row.query
			before := w.app.digest(0)
			for _, tok := range []string{"", "forged-" + w.alice.csrf} {
				res := w.request(t, w.alice.http, r.method, path, row.form, tok, false)
				if res.status != http.StatusForbidden {
					t.Errorf("alice POST %s with token %q: %s, want 403", path, tok, res)
				}
			}
			if w.app.digest(0) != before {
				t.Errorf("a POST %s refused for its CSRF token changed the database", path)
			}
		}
		// Still signed in: the refused logout did nothing.
		if res := w.request(t, w.alice.http, http.MethodGet, "/", nil, "", false); res.status != http.StatusOK {
			t.Errorf("alice after the CSRF sweep: %s", res)
		}
	})

	// The control: alice's own GETs answer and show what the others must not see.
	t.Run("owner of the workspace", func(t *testing.T) {
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access != accessOwner || r.method != http.MethodGet || !strings.Contains(r.path, ":id") {
				continue
			}
			path := w.path(r) + row.query
			res := w.request(t, w.alice.http, r.method, path, nil, "", true)
			if res.status != http.StatusOK {
				t.Errorf("alice GET %s: %s", path, res)
				continue
			}
			if !slices.ContainsFunc(secretsOfA, func(s string) bool { return strings.Contains(res.body, s) }) {
				t.Errorf("alice GET %s shows none of A's names, so the sweep proves nothing there:\n%s", path, truncate(res.body))
			}
		}
	})
}

// mcpAnswer is one raw JSON-RPC tools/call answer.
type mcpAnswer struct {
	status  int
	header  string // WWW-Authenticate
	body    string
	isError bool
	text    string
	meta    []string // _meta["mcp/www_authenticate"]
	// rpcError is the message of a JSON-RPC error answer.
	rpcError string
}

// mcpCall posts one tools/call to /mcp with token (none when empty).
func (w *sweepWorld) mcpCall(t *testing.T, token, tool string, args map[string]any) mcpAnswer {
	t.Helper()
	return w.mcpCallAt(t, "/mcp", token, tool, args)
}

// mcpCallAt is mcpCall to another path (such as /mcp with a query).
// The answer of a JSON-RPC error carries it in rpcError.
func (w *sweepWorld) mcpCallAt(t *testing.T, path, token, tool string, args map[string]any) mcpAnswer {
	t.Helper()
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, w.app.srv.URL+path, bytes.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	a := mcpAnswer{status: res.StatusCode, header: res.Header.Get("WWW-Authenticate"), body: string(b)}
	var out struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Meta map[string][]string `json:"_meta"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Result == nil && out.Error == nil {
		t.Fatalf("%s: not a JSON-RPC answer (status %d): %s", tool, res.StatusCode, b)
	}
	if out.Error != nil {
		a.rpcError = out.Error.Message
		return a
	}
	a.isError = out.Result.IsError
	for _, c := range out.Result.Content {
		a.text += c.Text
	}
	a.meta = out.Result.Meta["mcp/www_authenticate"]
	return a
}

// toolScopes lists the tools as anyone sees them, with each one's scope.
func (w *sweepWorld) toolScopes() map[string]string {
	t := w.app.t
	req, _ := http.NewRequest(http.MethodPost, w.app.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Result struct {
			Tools []struct {
				Name            string `json:"name"`
				SecuritySchemes []struct {
					Scopes []string `json:"scopes"`
				} `json:"securitySchemes"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	scopes := map[string]string{}
	for _, tl := range out.Result.Tools {
		if len(tl.SecuritySchemes) != 1 || len(tl.SecuritySchemes[0].Scopes) != 1 {
			t.Fatalf("tool %s: securitySchemes %+v", tl.Name, tl.SecuritySchemes)
		}
		scopes[tl.Name] = tl.SecuritySchemes[0].Scopes[0]
	}
	if len(scopes) == 0 {
		t.Fatal("tools/list listed no tools")
	}
	return scopes
}

// sweepTool is one tool's row in the sweep.
type sweepTool struct {
	args map[string]any
	// session marks a tool that addresses A's session: an agent of another
	// workspace gets "session not found", an uninvited connection "not
	// invited to this session".
	session bool
	// uninvited is, for the other tools, the refusal A's uninvited
	// connection gets ("" when the call succeeds), and why.
	uninvited string
	why       string
}

func (w *sweepWorld) toolTable(ref map[string]any) map[string]sweepTool {
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range ref {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	events := map[string]any{"resource_type": ref["session_type"], "resource_id": ref["session_id"], "after_sequence": 0}
	return map[string]sweepTool{
		"claim_connected_profile": {args: map[string]any{"handle": secretHandle, "display_name": "Copycat"},
			uninvited: "handle taken", why: "handles are unique per workspace: free in B (nothing about A shows), taken in A"},
		"set_status":         {args: map[string]any{"task": "sweeping"}, why: "acts on the caller's own profile only"},
		"list_agents":        {args: map[string]any{}, why: "the caller's workspace only; statuses only where a project is shared"},
		"list_sessions":      {args: map[string]any{}, why: "the sessions the caller is invited to only"},
		"read_session_state": {args: ref, session: true},
		"read_session_mail":  {args: with("limit", 10), session: true},
		"post_session_note":  {args: with("subject", "Hijack", "body", "Hijack", "idempotency_key", "sweep-1"), session: true},
		"reply_to_sender": {args: with("to", store.OwnerSlug(w.alice.owner.ID), "subject", "Hijack", "body", "Hijack", "idempotency_key", "sweep-2"),
			session: true},
		"poll_resource_events": {args: events, session: true},
	}
}

// agentRows is A's agent's profile and status, to see that no call of
// another changed them.
func (w *sweepWorld) agentRows() string {
	var out string
	err := w.app.sql().QueryRow(`
		SELECT coalesce((SELECT p::text FROM agent_profiles p WHERE connection_id = $1), '') || '|' ||
		       coalesce((SELECT s::text FROM statuses s WHERE connection_id = $1), '')`, w.ag.connID).Scan(&out)
	if err != nil {
		w.app.t.Fatal(err)
	}
	return out
}

// TestSweepTools calls every MCP tool as an agent of another workspace, as
// an uninvited connection of the same workspace, with a read-only token and
// with none, after checking that A's own agent gets an answer.
func TestSweepTools(t *testing.T) {
	t.Parallel()
	w := newSweepWorld(t)
	scopes := w.toolScopes()
	ref := map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID}
	table := w.toolTable(ref)
	var tools []string
	for name := range scopes {
		if _, ok := table[name]; !ok {
			t.Errorf("tool %s has no row in the authorization sweep: add one", name)
			continue
		}
		tools = append(tools, name)
	}
	for name := range table {
		if _, ok := scopes[name]; !ok {
			t.Errorf("the sweep has a row for tool %s, which tools/list does not list", name)
		}
	}
	sort.Strings(tools)
	// What may never change through another's call: A's mail, events,
	// invitations, seats, sessions and projects, and A's agent's rows.
	guarded := func() string {
		return w.app.digest(0, "notes", "resource_events", "invitations", "project_seats", "sessions", "projects") + w.agentRows()
	}
	metadata := `resource_metadata="` + w.app.srv.URL + `/.well-known/oauth-protected-resource/mcp"`
	// Same workspace: the agent's handle and name are visible, nothing else.
	strangerSecrets := []string{secretProject, secretSession, secretSubject, secretBody, secretTask}
	// reclaim puts back the profiles the claim_connected_profile row changes.
	reclaim := func() {
		for _, ag := range []agent{w.ag, w.bobAg} {
			if _, err := w.app.store.ClaimProfile(context.Background(), ag.workspaceID, ag.connID, ag.handle, ag.name); err != nil {
				t.Fatal(err)
			}
		}
	}

	for _, name := range tools {
		row, scope := table[name], scopes[name]
		t.Run(name, func(t *testing.T) {
			defer reclaim()
			check := func(who string, a mcpAnswer, secrets []string) {
				t.Helper()
				if a.status >= 500 || a.rpcError != "" {
					t.Errorf("%s: status %d: %s", who, a.status, a.body)
				}
				noSecrets(t, who+" "+name, a.body, secrets)
			}

			// An agent of another workspace.
			before := guarded()
			a := w.mcpCall(t, w.bobAg.token, name, row.args)
			secrets := secretsOfA
			if name == "claim_connected_profile" {
				secrets = strangerSecrets // it claims A's handle in B: its own arguments come back
			}
			check("other workspace", a, secrets)
			if row.session {
				missing := w.mcpCall(t, w.bobAg.token, name, mapWith(row.args, "session_id", "no-such-session", "resource_id", "no-such-session"))
				if !a.isError || !strings.HasPrefix(a.text, "session not found") || a.text != missing.text {
					t.Errorf("other workspace: %v %q, want the refusal a missing session gets (%q)", a.isError, a.text, missing.text)
				}
			} else if a.isError {
				t.Errorf("other workspace (%s): refused: %s", row.why, a.text)
			}
			if guarded() != before {
				t.Errorf("other workspace: the call changed workspace A")
			}

			// A connection of A's workspace that is neither seated nor invited.
			before = guarded()
			a = w.mcpCall(t, w.stranger.token, name, row.args)
			check("uninvited", a, strangerSecrets)
			switch {
			case row.session && (!a.isError || !strings.HasPrefix(a.text, "not invited to this session")):
				t.Errorf("uninvited: %v %q, want \"not invited to this session\"", a.isError, a.text)
			case !row.session && row.uninvited == "" && a.isError:
				t.Errorf("uninvited (%s): refused: %s", row.why, a.text)
			case !row.session && row.uninvited != "" && (!a.isError || !strings.Contains(a.text, row.uninvited)):
				t.Errorf("uninvited (%s): %v %q, want %q", row.why, a.isError, a.text, row.uninvited)
			}
			if guarded() != before {
				t.Errorf("uninvited: the call changed what it may not")
			}

			// A read-only token (of a connection invited to the session).
			before = guarded()
			a = w.mcpCall(t, w.readOnly, name, row.args)
			check("read-only", a, nil)
			if scope == store.ScopeWrite {
				if a.status != http.StatusForbidden || !strings.Contains(a.header, `error="insufficient_scope"`) ||
					!strings.Contains(a.header, `scope="osfoundry:write"`) || !a.isError || len(a.meta) != 1 || a.meta[0] != a.header {
					t.Errorf("read-only on a write tool: status %d, header %q, isError %v, _meta %q", a.status, a.header, a.isError, a.meta)
				}
				if guarded() != before {
					t.Errorf("read-only: a refused write changed the database")
				}
			} else if a.status != http.StatusOK || a.isError {
				t.Errorf("read-only on a read tool: status %d: %s", a.status, a.body)
			}

			// No token: refused two ways at once.
			before = guarded()
			a = w.mcpCall(t, "", name, row.args)
			check("no token", a, secretsOfA)
			if a.status != http.StatusUnauthorized || !strings.HasPrefix(a.header, "Bearer ") || !strings.Contains(a.header, metadata) ||
				!strings.Contains(a.header, `scope="osfoundry:read osfoundry:write"`) || !a.isError || a.text != "Authentication required" ||
				len(a.meta) != 1 || a.meta[0] != a.header {
				t.Errorf("no token: status %d, header %q, isError %v, text %q, _meta %q", a.status, a.header, a.isError, a.text, a.meta)
			}
			if guarded() != before {
				t.Errorf("no token: the call changed the database")
			}

			// A valid token in the query string instead of the header.
			before = guarded()
			a = w.mcpCallAt(t, "/mcp?access_token="+url.QueryEscape(w.ag.token), "", name, row.args)
			noSecrets(t, "token in the query "+name, a.body, secretsOfA)
			if a.status != http.StatusBadRequest || !strings.Contains(a.rpcError, "Authorization header") {
				t.Errorf("token in the query string: status %d, error %q: %s", a.status, a.rpcError, a.body)
			}
			if guarded() != before {
				t.Errorf("token in the query string: the call changed the database")
			}

			// The control: A's own invited agent gets an answer, with A's
			// names in it where the tool reads the session.
			a = w.mcpCall(t, w.ag.token, name, row.args)
			if a.status != http.StatusOK || a.isError {
				t.Errorf("A's own agent: status %d: %s", a.status, a.body)
			}
			if (name == "read_session_state" || name == "read_session_mail") && !strings.Contains(a.body, secretSession) && !strings.Contains(a.body, secretSubject) {
				t.Errorf("A's own agent sees none of A's names, so the sweep proves nothing: %s", a.body)
			}
		})
	}
}

// mapWith copies m and replaces the keys it already has.
func mapWith(m map[string]any, kv ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if _, ok := out[kv[i]]; ok {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}
