package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// ownerPassword is the password of every world's owner.
const ownerPassword = "long enough password"

// world is a workspace with a project, a session and invited agents, written
// straight into the database the replicas use.
type world struct {
	st      *store.Store
	owner   *store.Owner
	session *store.Session
	tokens  []string
}

func newWorld(t *testing.T, dsn, baseURL string, agents int) *world {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	w := &world{st: st}
	w.owner, err = st.CreateOwner(ctx, store.NewOwner{Email: fmt.Sprintf("o%d@example.com", time.Now().UnixNano()), DisplayName: "O", Password: ownerPassword, WorkspaceName: fmt.Sprint(time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreateProject(ctx, w.owner.WorkspaceID, "P")
	if err != nil {
		t.Fatal(err)
	}
	// The load of these tests is far above an agent's: the most writes a
	// project allows.
	if err := st.SetProjectWriteLimits(ctx, w.owner.WorkspaceID, p.ID, store.WriteLimits{PerMinute: store.MaxWritesPerMinute, Burst: store.MaxWriteBurst}); err != nil {
		t.Fatal(err)
	}
	w.session, err = st.CreateSession(ctx, store.NewSession{WorkspaceID: w.owner.WorkspaceID, ProjectID: p.ID, Type: "team_session", Title: "S"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range agents {
		c, tok, _, err := st.CreateTokenConnection(ctx, store.NewConnection{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, ClientName: "c", Scopes: store.AllScopes, ProjectIDs: []int64{p.ID}}, baseURL+"/mcp", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ClaimProfile(ctx, w.owner.WorkspaceID, c.ID, fmt.Sprintf("agent-%d", i), "Agent"); err != nil {
			t.Fatal(err)
		}
		if err := st.Invite(ctx, w.owner.WorkspaceID, w.session.ID, c.ID, store.RoleContributor); err != nil {
			t.Fatal(err)
		}
		w.tokens = append(w.tokens, tok)
	}
	return w
}

// toolReply is what the raw client makes of an answer.
type toolReply struct {
	status  int
	isError bool
	rpcErr  string
	data    map[string]any
	text    string
}

var rpcSeq atomic.Int64

// callTool posts one JSON-RPC tools/call with a short timeout.
func callTool(base, token, name string, args any) (*toolReply, error) {
	return callToolWithin(base, token, name, args, 10*time.Second)
}

// callToolWithin is callTool with the client's timeout given.
func callToolWithin(base, token, name string, args any, timeout time.Duration) (*toolReply, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rpcSeq.Add(1), "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	c := &http.Client{Timeout: timeout}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result struct {
			IsError           bool             `json:"isError"`
			StructuredContent map[string]any   `json:"structuredContent"`
			Content           []map[string]any `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	r := &toolReply{status: res.StatusCode}
	if err := json.Unmarshal(b, &msg); err != nil {
		return r, fmt.Errorf("HTTP %d, undecodable body %q", res.StatusCode, b)
	}
	if msg.Error != nil {
		r.rpcErr = msg.Error.Message
	}
	r.isError = msg.Result.IsError
	r.data = msg.Result.StructuredContent
	if len(msg.Result.Content) > 0 {
		r.text, _ = msg.Result.Content[0]["text"].(string)
	}
	if r.data == nil && r.text != "" {
		_ = json.Unmarshal([]byte(r.text), &r.data)
	}
	return r, nil
}

func (w *world) note(subject, body, key string) map[string]any {
	return map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID, "subject": subject, "body": body, "idempotency_key": key}
}

// replicaPair is two replicas on one fresh database that share the public
// URL base (a free loopback address nothing listens on until proxy is
// called), with a world in that database.
type replicaPair struct {
	dsn, addr, base string
	a, b            *replica
	w               *world
}

// startReplicaPair starts both replicas with start (startReplica, or a
// variant), waits until both are ready, and makes a world with agents agents.
func startReplicaPair(t *testing.T, agents int, start func(t *testing.T, dsn, baseURL string, extra ...string) *replica) *replicaPair {
	t.Helper()
	p := &replicaPair{dsn: storetest.NewDatabase(t), addr: freePort(t)}
	p.base = "http://" + p.addr
	p.a = start(t, p.dsn, p.base)
	p.b = start(t, p.dsn, p.base)
	p.a.waitReady()
	p.b.waitReady()
	p.w = newWorld(t, p.dsn, p.base, agents)
	return p
}

// proxy serves the pair round-robin on their public URL.
func (p *replicaPair) proxy(t *testing.T) *httptest.Server {
	t.Helper()
	return listenRoundRobin(t, p.addr, p.a, p.b)
}

// listenRoundRobin serves a round-robin proxy over the replicas on addr (the
// replicas' public base URL).
func listenRoundRobin(t *testing.T, addr string, backends ...*replica) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(roundRobinHandler(backends...))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func roundRobinHandler(backends ...*replica) http.Handler {
	var n atomic.Int64
	targets := make([]*url.URL, len(backends))
	for i, b := range backends {
		targets[i], _ = url.Parse(b.URL)
	}
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(targets[int(n.Add(1))%len(targets)])
		r.Out.Host = r.In.Host
	}}
}
