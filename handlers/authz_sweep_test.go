package handlers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/handlers/web"
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
	app     *testApp
	alice   *ownerClient
	bob     *ownerClient
	p       *store.Project
	session *store.Session
	ag      agent // A's agent, seated in p and invited to the session
	note    int64 // ag's note in the session
	// personInvite is an open invitation of a person to A.
	personInvite int64
	// approval is ag's pending approval (a permission prompt).
	approval   int64
	bobP       *store.Project
	bobSession *store.Session
	bobAg      agent                  // B's agent
	signIn     int64                  // alice's sign-in
	device     int64                  // alice's device notified
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
	if err := app.sql().QueryRow(`SELECT id FROM sign_ins WHERE owner_id = $1`, w.alice.owner.ID).Scan(&w.signIn); err != nil {
		t.Fatal(err)
	}
	w.p = w.alice.project(secretProject)
	w.session = w.alice.session(w.p, secretSession)
	w.ag = app.agent("alice@example.com", secretProject, secretHandle, secretName)
	app.invite(w.session, w.ag)
	app.sql().Exec(`UPDATE connections SET client_name = $1 WHERE id = $2`, secretClient, w.ag.connID)
	app.setStatus(w.ag, new("acme/site"), new("main"), new(secretTask))
	// A second agent on the same branch: the project's radar names both.
	app.setStatus(app.agent("alice@example.com", secretProject, "second-agent", "Second"), new("acme/site"), new("main"), nil)
	hook, _, err := app.store.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: w.alice.owner.WorkspaceID, ProjectID: w.p.ID,
		URL: "https://hooks.example.com/" + secretHook, Kind: store.WebhookJSON})
	if err != nil {
		t.Fatal(err)
	}
	w.hook = hook
	dev, err := app.store.SubscribePush(ctx, w.alice.owner.WorkspaceID, w.alice.owner.ID, store.PushSubscribe{
		Endpoint: "https://push.example.com/" + secretHook, P256dh: append([]byte{4}, make([]byte, 64)...), Auth: make([]byte, 16), Name: secretName}, false)
	if err != nil {
		t.Fatal(err)
	}
	w.device = dev.ID
	w.note = app.agentNote(w.ag, w.session.ID, secretSubject, secretBody)
	inv, _, err := app.store.CreatePersonInvite(ctx, store.Actor{OwnerID: w.alice.owner.ID, WorkspaceID: w.alice.owner.WorkspaceID},
		"invited@example.com", store.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	w.personInvite = inv.ID
	ap, err := app.store.RequestApproval(ctx, store.ApprovalRequest{WorkspaceID: w.alice.owner.WorkspaceID, ConnectionID: w.ag.connID,
		Tool: "Bash", Summary: "echo " + secretBody})
	if err != nil {
		t.Fatal(err)
	}
	w.approval = ap.ID
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
// agent, except :conn, :hook and :note, which name A's agent, A's webhook
// endpoint and A's note: ids of two workspaces mixed.
func (w *sweepWorld) bobPath(r route) string {
	return w.fill(r, w.bobP, w.bobSession, w.bobAg.connID)
}

// fill fills a route's :id with p, session or conn (by the route's area),
// or alice's sign-in, its :conn, :hook and :note with A's agent, A's
// webhook endpoint and A's note, and a wildcard with a static file.
func (w *sweepWorld) fill(r route, p *store.Project, session *store.Session, conn int64) string {
	path := r.path
	switch {
	case strings.HasPrefix(path, "/projects/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(p.ID), 1)
	case strings.HasPrefix(path, "/sessions/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(session.ID), 1)
	case strings.HasPrefix(path, "/connections/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(conn), 1)
	case strings.HasPrefix(path, "/account/sign-ins/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(w.signIn), 1)
	case strings.HasPrefix(path, "/account/devices/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(w.device), 1)
	case strings.HasPrefix(path, "/approvals/:id"), strings.HasPrefix(path, "/agent/approvals/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(w.approval), 1)
	case strings.HasPrefix(path, "/people/invitations/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(w.personInvite), 1)
	case strings.HasPrefix(path, "/people/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(w.alice.owner.ID), 1)
	}
	path = strings.Replace(path, ":conn", fmt.Sprint(w.ag.connID), 1)
	path = strings.Replace(path, ":hook", fmt.Sprint(w.hook.ID), 1)
	path = strings.Replace(path, ":note", fmt.Sprint(w.note), 1)
	return strings.Replace(path, "*", "0/app.css", 1)
}

// digest fingerprints the rows of the database: of workspace ws only when ws
// is not 0 (tables without a workspace_id are left out then), of the named
// tables only when any are named. attempts (the password checks'
// throttle) is never part of it.
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
		if tb.name == "attempts" || len(only) > 0 && !slices.Contains(only, tb.name) {
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
	approve := url.Values{"decision": {"approve"}, "agent": {"new"}, "grant": {store.ScopeRead, store.ScopeWrite}, "project": {fmt.Sprint(w.p.ID)}}
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
		"GET /healthz":              {public: probe},
		"GET /readyz":               {public: probe},
		"GET /static/*":             {public: "embedded CSS, scripts and icons, the same for everyone"},
		"GET /manifest.webmanifest": {public: "the installable app's manifest, the same for everyone"},
		"GET /sw.js":                {public: "the service worker's script, the same for everyone"},
		"GET /offline":              {public: "the page the service worker shows offline, the same for everyone"},

		"POST /mcp":                                         {public: mcpEntry},
		"GET /mcp":                                          {public: "stateless MCP has no stream to open: refused without data"},
		"DELETE /mcp":                                       {public: "stateless MCP has no session to delete: refused without data"},
		"OPTIONS /mcp":                                      {public: cors},
		"GET /agent/events":                                 {public: "an agent's relay: the bearer token of /mcp decides, 401 without one"},
		"POST /agent/delivered":                             {public: "an agent's delivery report: the bearer token of /mcp decides, 401 without one"},
		"POST /agent/approvals":                             {public: "an agent's permission prompt: the bearer token of /mcp decides, 401 without one"},
		"GET /agent/approval-settings":                      {public: "an agent's approval wait: the bearer token of /mcp decides, 401 without one"},
		"GET /agent/approvals/:id":                          {public: "an agent waiting on its own prompt: the bearer token of /mcp decides, 401 without one"},
		"POST /agent/approvals/:id/end":                     {public: "an agent closing its own prompt: the bearer token of /mcp decides, 401 without one"},
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
		// The account acts on the caller's own owner; another owner's
		// sign-in is not found.
		"GET /account":                      {other: http.StatusOK},
		"POST /account/password":            {form: url.Values{"current_password": {"not it"}, "new_password": {"a hijacked password"}}, other: http.StatusUnprocessableEntity},
		"POST /account/sign-ins/end-others": {other: http.StatusSeeOther},
		"POST /account/sign-ins/:id/end":    {},
		"POST /account/mail":                {form: url.Values{"replies": {"on"}}, other: http.StatusSeeOther},
		"POST /account/push":                {form: url.Values{"replies": {"on"}}, other: http.StatusSeeOther},
		// A form is not a subscription; another owner's device is not found.
		"POST /account/devices":            {other: http.StatusUnprocessableEntity},
		"POST /account/devices/:id/rename": {form: url.Values{"name": {"Hijacked"}}},
		"POST /account/devices/:id/remove": {},
		"GET /push/csrf":                   {other: http.StatusOK},
		"POST /account/profile":            {form: url.Values{"display_name": {" "}, "email": {"hijack@example.com"}}, other: http.StatusUnprocessableEntity},
		// An answer link's token is its credential, whoever is signed in;
		// the sweep's (":token") is none, so not found for everyone
		// (answer_link_test.go sweeps real links).
		"GET /answer/:token":  {other: http.StatusNotFound, signedOut: http.StatusNotFound},
		"POST /answer/:token": {form: url.Values{"answer": {"Hijacked"}}, other: http.StatusNotFound, signedOut: http.StatusNotFound},
		// So are an approval link's (approval_link_test.go).
		"GET /approve/:token":  {other: http.StatusNotFound, signedOut: http.StatusNotFound},
		"POST /approve/:token": {form: url.Values{"decision": {"allow"}}, other: http.StatusNotFound, signedOut: http.StatusNotFound},

		// People and the audit log are the caller's own workspace's; a
		// person or invitation of A is not found. The sweep's invitation
		// token (":token") is none: gone for everyone.
		"GET /people":                         {other: http.StatusOK},
		"POST /people/invitations":            {form: url.Values{"email": {"someone@example.com"}, "role": {"viewer"}}, other: http.StatusOK},
		"POST /people/invitations/:id/revoke": {},
		"POST /people/:id/role":               {form: url.Values{"role": {"viewer"}}},
		"POST /people/:id/remove":             {},
		"GET /join/:token":                    {other: http.StatusGone, signedOut: http.StatusGone},
		"POST /join/:token":                   {form: url.Values{"display_name": {"M"}, "password": {testPassword}}, other: http.StatusGone, signedOut: http.StatusGone},
		"GET /audit":                          {other: http.StatusOK},
		"GET /audit.jsonl":                    {other: http.StatusOK},

		// Routes without ids act on the caller's own workspace.
		"GET /":                {other: http.StatusOK},
		"POST /projects":       {form: url.Values{"name": {"Bob's second"}}, other: http.StatusSeeOther},
		"GET /connections":     {other: http.StatusOK},
		"GET /inbox":           {other: http.StatusOK},
		"POST /inbox/read":     {other: http.StatusSeeOther},
		"GET /inbox/questions": {other: http.StatusOK},
		"GET /approvals":       {other: http.StatusOK},
		"GET /search":          {query: "?q=vermilion+saffron", other: http.StatusOK}, // words of A's note
		"GET /unread/stream":   {other: http.StatusOK},
		"POST /connections/tokens": {form: url.Values{"client_name": {"Sneaky"}, "scope": {store.ScopeRead}, "project": {fmt.Sprint(w.p.ID)}},
			other: http.StatusUnprocessableEntity},

		// Routes with A's ids: not found for anyone else.
		"GET /projects/:id":                                            {},
		"GET /projects/:id/radar":                                      {query: "?v=x"},
		"POST /projects/:id/rename":                                    {form: url.Values{"name": {"Hijacked"}}},
		"POST /projects/:id/questions":                                 {form: url.Values{"blocking_minutes": {"0"}, "normal_minutes": {"0"}, "expiry_hours": {"1"}}},
		"POST /projects/:id/approvals":                                 {form: url.Values{"enabled": {"on"}, "wait_seconds": {"60"}, "delay_minutes": {"0"}}},
		"POST /approvals/:id/decide":                                   {form: url.Values{"verdict": {"allow"}}},
		"POST /projects/:id/limits":                                    {form: url.Values{"write_per_minute": {"1"}, "write_burst": {"1"}}},
		"POST /projects/:id/seats":                                     {form: url.Values{"handle": {"bee-agent"}}},
		"POST /projects/:id/seats/:conn/remove":                        {},
		"POST /projects/:id/sessions":                                  {form: url.Values{"session_type": {"team_session"}, "title": {"Hijacked"}}},
		"GET /projects/:id/webhooks":                                   {},
		"POST /projects/:id/webhooks":                                  {form: url.Values{"url": {"https://hooks.example.com/hijack"}, "kind": {store.WebhookJSON}}},
		"GET /projects/:id/webhooks/:hook":                             {},
		"GET /projects/:id/webhooks/:hook/log":                         {},
		"POST /projects/:id/webhooks/:hook/test":                       {},
		"POST /projects/:id/webhooks/:hook/deliveries/:delivery/retry": {},
		"POST /projects/:id/webhooks/:hook/enable":                     {},
		"POST /projects/:id/webhooks/:hook/disable":                    {},
		"POST /projects/:id/webhooks/:hook/delete":                     {},
		"GET /sessions/:id":                                            {},
		"GET /sessions/:id/stream":                                     {query: "?after=0"},
		"GET /sessions/:id/mail/poll":                                  {query: "?after=0"},
		"POST /sessions/:id/mail/read":                                 {form: url.Values{"upto": {fmt.Sprint(w.note)}}},
		"GET /sessions/:id/mail/older":                                 {query: fmt.Sprintf("?before=%d", w.note+1)},
		"GET /sessions/:id/presence":                                   {query: "?v=x"},
		"GET /sessions/:id/compose":                                    {query: fmt.Sprintf("?reply_to=%d", w.note)},
		"POST /sessions/:id/mail":                                      {form: url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(w.note)}, "subject": {"x"}, "body": {"Hijacked"}}},
		"GET /sessions/:id/notes/:note":                                {},
		"POST /sessions/:id/questions/:note/answer":                    {form: url.Values{"answer": {"Hijack"}}},
		"GET /sessions/:id/export.md":                                  {},
		"GET /sessions/:id/export.json":                                {},
		"GET /sessions/:id/participants":                               {},
		"POST /sessions/:id/invitations":                               {form: url.Values{"connection_id": {conn}, "role": {store.RoleRunner}}},
		"POST /sessions/:id/invitations/:conn":                         {form: url.Values{"role": {store.RoleRunner}}},
		"POST /sessions/:id/invitations/:conn/remove":                  {},
		"GET /connections/:id/revoke":                                  {},
		"POST /connections/:id/revoke":                                 {},
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
			f.Set(web.CSRFField, csrf)
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
