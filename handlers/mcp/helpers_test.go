package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/handlers/mcp"
	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// env is one test's world: a fresh database, the MCP handler mounted on a
// real HTTP server with a plain ServeMux, and helpers to populate it.
type env struct {
	t    testing.TB
	ctx  context.Context
	st   *store.Store
	h    *mcp.Handler
	srv  *httptest.Server
	base string
	// m receives the handler's tool calls.
	m *metrics.Metrics
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvOn(t, nil)
}

// newListeningEnv is newEnv whose handler hears the database's
// notifications through a running listener, as a served replica does.
func newListeningEnv(t testing.TB) *env {
	t.Helper()
	return newEnvOn(t, func(st *store.Store) *store.Listener { return runListener(t, st) })
}

// runListener runs a listener on st until the test ends, once connected.
func runListener(t testing.TB, st *store.Store) *store.Listener {
	t.Helper()
	l := st.NewListener(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-l.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("listener never connected")
	}
	return l
}

// newEnvOn builds the env; listen, when not nil, gives the handler its
// listener.
func newEnvOn(t testing.TB, listen func(*store.Store) *store.Listener) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), st: storetest.New(t), m: metrics.New()}
	mux := http.NewServeMux()
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	e.base = e.srv.URL
	var l *store.Listener
	if listen != nil {
		l = listen(e.st)
	}
	e.h = mcp.New(mcp.Options{Store: e.st, BaseURL: e.base, Metrics: e.m, Listener: l})
	mux.Handle("/mcp", e.h)
	mux.Handle("/.well-known/oauth-protected-resource/mcp", e.h.ProtectedResourceMetadata())
	mux.Handle("/.well-known/oauth-protected-resource", e.h.ProtectedResourceMetadata())
	return e
}

func (e *env) mcpURL() string { return e.base + "/mcp" }

// replica serves the test's database through a second handler with a pool
// of its own, as another replica behind the same public URL would; its /mcp
// accepts the tokens of e.
func (e *env) replica(t testing.TB) *httptest.Server {
	t.Helper()
	srv, _ := e.replicaOn(t, false)
	return srv
}

// replicaOn is replica, with a listener of its own when listening; it
// returns the replica's handler too.
func (e *env) replicaOn(t testing.TB, listening bool) (*httptest.Server, *mcp.Handler) {
	t.Helper()
	st, err := store.Open(e.ctx, e.sql().DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	var l *store.Listener
	if listening {
		l = runListener(t, st)
	}
	mux := http.NewServeMux()
	h := mcp.New(mcp.Options{Store: st, BaseURL: e.base, Listener: l})
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, h
}

// workspace creates a workspace with one owner (rows written directly: the
// password hash is never checked here).
func (e *env) workspace(name string) (wsID, ownerID int64) {
	e.t.Helper()
	return e.sql().InsertWorkspace(name)
}

// sql reaches the test's database directly (storetest.Fixtures).
func (e *env) sql() *storetest.Fixtures { return storetest.SQL(e.t, e.st) }

func (e *env) project(wsID int64, name string) int64 {
	e.t.Helper()
	p, err := e.st.CreateProject(e.ctx, wsID, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return p.ID
}

func (e *env) session(wsID, projectID int64, typ string) *store.Session {
	e.t.Helper()
	s, err := e.st.CreateSession(e.ctx, store.NewSession{WorkspaceID: wsID, ProjectID: projectID, Type: typ, Title: "Session " + typ})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// agent is a connection with an access token for this server's /mcp.
type agent struct {
	e     *env
	conn  *store.Connection
	token string
	cs    *mcpsdk.ClientSession
}

func (e *env) agent(wsID, ownerID int64, scopes []string, projects ...int64) *agent {
	e.t.Helper()
	c, token, _, err := e.st.CreateTokenConnection(e.ctx, store.NewConnection{
		WorkspaceID: wsID, OwnerID: ownerID, ClientName: "test client", Scopes: scopes, ProjectIDs: projects,
	}, e.mcpURL(), time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	return &agent{e: e, conn: c, token: token}
}

func (a *agent) invite(s *store.Session, role string) {
	a.e.t.Helper()
	if err := a.e.st.Invite(a.e.ctx, s.WorkspaceID, s.ID, a.conn.ID, role); err != nil {
		a.e.t.Fatal(err)
	}
}

// team is workspace "W" with project "P" and a session of it, with agents
// seated in P with every scope, each with a claimed profile and invited to
// the session.
type team struct {
	ws, owner, p int64
	s            *store.Session
	agents       []*agent
	slugs        []string
}

// team makes one agent per handle and claims its profile, then the session
// of type typ, to which it invites each agent as role.
func (e *env) team(typ, role string, handles ...string) *team {
	e.t.Helper()
	tm := &team{}
	tm.ws, tm.owner = e.workspace("W")
	tm.p = e.project(tm.ws, "P")
	for _, h := range handles {
		a := e.agent(tm.ws, tm.owner, store.AllScopes, tm.p)
		tm.agents = append(tm.agents, a)
		tm.slugs = append(tm.slugs, a.claim(h))
	}
	tm.s = e.session(tm.ws, tm.p, typ)
	for _, a := range tm.agents {
		a.invite(tm.s, role)
	}
	return tm
}

// concurrently starts f(0) … f(n-1) in goroutines, releases them at once,
// and returns their errors by index once all have returned.
func concurrently(n int, f func(i int) error) []error {
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = f(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// bearer adds the token to every request of the go-sdk client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens a go-sdk client session that sends the agent's token
// through rt (http.DefaultTransport when nil).
func (a *agent) connect(rt http.RoundTripper) *mcpsdk.ClientSession {
	a.e.t.Helper()
	if rt == nil {
		rt = http.DefaultTransport
	}
	return connectClient(a.e.t, a.e.mcpURL(), bearer{a.token, rt})
}

func connectClient(t testing.TB, url string, rt http.RoundTripper) *mcpsdk.ClientSession {
	t.Helper()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "osfoundry-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcpsdk.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool through the agent's client session (opened on first
// use) and returns the result.
func (a *agent) call(name string, args any) *mcpsdk.CallToolResult {
	a.e.t.Helper()
	if a.cs == nil {
		a.cs = a.connect(nil)
	}
	res, err := a.cs.CallTool(a.e.ctx, &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.e.t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls a tool, fails the test on an isError result, and decodes the
// structured output into out (when non-nil).
func (a *agent) ok(name string, args any, out any) {
	a.e.t.Helper()
	res := a.call(name, args)
	if res.IsError {
		a.e.t.Fatalf("%s(%s): isError %s", name, mustJSON(args), text(res))
	}
	if out != nil {
		if err := json.Unmarshal([]byte(mustJSON(res.StructuredContent)), out); err != nil {
			a.e.t.Fatalf("%s: decode %s: %v", name, mustJSON(res.StructuredContent), err)
		}
	}
}

// refused calls a tool and returns the isError text, failing when the call
// succeeded.
func (a *agent) refused(name string, args any) string {
	a.e.t.Helper()
	res := a.call(name, args)
	if !res.IsError {
		a.e.t.Fatalf("%s(%s): want isError, got %s", name, mustJSON(args), mustJSON(res.StructuredContent))
	}
	return text(res)
}

func text(res *mcpsdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// rpc posts one raw JSON-RPC message to /mcp, as a plain HTTP client would.
func (e *env) rpc(token string, body string, hdr ...string) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.mcpURL(), bytes.NewBufferString(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, b
}

// toolCall is the JSON-RPC body of a tools/call.
func toolCall(id int, name string, args any) string {
	return mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
}

// ownerNote writes a note from an owner directly (the web app's path is not
// part of this package): to is a sender slug, or nil for the whole session.
func (e *env) ownerNote(s *store.Session, ownerID int64, to *string, messageType, subject string) int64 {
	e.t.Helper()
	var id int64
	err := e.sql().QueryRow(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, recipient_slug, message_type, subject, body)
		VALUES ($1, $2, 'owner', $3, 'owner', 'Owner', $4, $5, $6, 'body') RETURNING id`,
		s.WorkspaceID, s.ID, ownerID, to, messageType, subject).Scan(&id)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// claim claims a profile for the agent and returns its sender slug.
func (a *agent) claim(handle string) string {
	a.e.t.Helper()
	var p struct {
		SenderSlug string `json:"sender_slug"`
	}
	a.ok("claim_connected_profile", map[string]any{"handle": handle, "display_name": strings.ToUpper(handle)}, &p)
	return p.SenderSlug
}

func ref(s *store.Session) map[string]any {
	return map[string]any{"session_type": s.Type, "session_id": s.PublicID}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// jsonInto decodes a structured tool result into out.
func jsonInto(v any, out any) error {
	return json.Unmarshal([]byte(mustJSON(v)), out)
}
