package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// and team session S) in its own database, reached through a gate that can
// hold answers back or close.
type agentServer struct {
	*replica
	URL    string // the gate, the server's public base URL
	dsn    string
	w      *world
	gate   *httptest.Server
	silent atomic.Bool // the gate takes requests and never answers
	// slow holds each answer back this long (a time.Duration); arrived
	// counts the requests the gate has taken.
	slow    atomic.Int64
	arrived atomic.Int64
}

func startAgentServer(t *testing.T) *agentServer {
	t.Helper()
	dsn := storetest.NewDatabase(t)
	addr := freePort(t)
	s := &agentServer{URL: "http://" + addr, dsn: dsn}
	s.replica = startReplica(t, dsn, s.URL)
	s.waitReady()
	s.w = newWorld(t, dsn, s.URL, 0)
	proxy := roundRobinHandler(s.replica)
	s.gate = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.arrived.Add(1)
		if d := time.Duration(s.slow.Load()); d > 0 {
			time.Sleep(d) // the server is slow to answer
		}
		if s.silent.Load() {
			// Until the client gives up: reading the body to its end lets
			// the server notice a closed connection.
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.gate.Listener.Close()
	s.gate.Listener = l
	s.gate.Start()
	t.Cleanup(s.gate.Close)
	return s
}

// owner is the world's owner at a browser, signed in on the consent page.
func (s *agentServer) owner(t *testing.T) *ownerBrowser { return newOwnerBrowser(t, s.URL, s.w) }

// newestConnection is the id of the connection a login just created.
func (s *agentServer) newestConnection(t *testing.T) int64 {
	return int64(countRows(t, s.dsn, `SELECT max(id)::int FROM connections WHERE workspace_id = $1`, s.w.owner.WorkspaceID))
}

// status is the agent's self-reported status.
func (s *agentServer) status(t *testing.T, conn int64) (repo, branch, task string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	err = c.QueryRow(ctx, `SELECT coalesce(repo, '<null>'), coalesce(branch, '<null>'), coalesce(task, '<null>') FROM statuses WHERE connection_id = $1`, conn).
		Scan(&repo, &branch, &task)
	if err != nil {
		t.Fatalf("status of connection %d: %v", conn, err)
	}
	return
}

// mcpRequests counts the server's /mcp requests so far (one log line each).
func (s *agentServer) mcpRequests() int { return strings.Count(s.replica.logs.String(), "path=/mcp") }

// connectAgent logs a machine in (claiming handle), and invites the new
// connection to the world's session. It returns the connection's id.
func (s *agentServer) connectAgent(t *testing.T, m *agentMachine, handle string) int64 {
	t.Helper()
	out := m.login(s.URL, s.owner(t), "--handle", handle, "--name", "Widgets agent")
	if !strings.Contains(out, "Claimed the profile "+handle) {
		t.Fatalf("login output:\n%s", out)
	}
	conn := s.newestConnection(t)
	if err := s.w.st.Invite(context.Background(), s.w.owner.WorkspaceID, s.w.session.ID, conn, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	return conn
}

// hookAnswer checks that a hook's stdout is exactly the JSON object Claude
// Code validates for an event that takes context, and returns the context.
func hookAnswer(t *testing.T, event string, r hookRun) string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: exit %d, stderr %q", event, r.code, r.stderr)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &top); err != nil {
		t.Fatalf("%s: stdout is not a JSON object: %q", event, r.stdout)
	}
	var inner map[string]json.RawMessage
	json.Unmarshal(top["hookSpecificOutput"], &inner)
	if len(top) != 1 || len(inner) != 2 {
		t.Fatalf("%s: want exactly {hookSpecificOutput: {hookEventName, additionalContext}}, got %s", event, r.stdout)
	}
	var name, text string
	if json.Unmarshal(inner["hookEventName"], &name) != nil || name != event || json.Unmarshal(inner["additionalContext"], &text) != nil || text == "" {
		t.Fatalf("%s: bad answer %s", event, r.stdout)
	}
	return text
}

func quiet(t *testing.T, what string, r hookRun) {
	t.Helper()
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("%s: want exit 0 and no output, got exit %d, stdout %q, stderr %q", what, r.code, r.stdout, r.stderr)
	}
}

// agentCall calls a tool as the machine's connection, with its saved token.
func (m *agentMachine) agentCall(server, tool string, args any) *toolReply {
	m.t.Helper()
	r, err := callTool(server, m.credentials().AccessToken, tool, args)
	if err != nil || r.rpcErr != "" {
		m.t.Fatalf("%s: %v %+v", tool, err, r)
	}
	return r
}
