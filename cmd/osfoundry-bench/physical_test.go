package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
	"github.com/osfoundry/osfoundry/store/testfactory"
)

// benchFixture is a fixture of one agent in one session of 12 notes, and a
// session of the physical scenarios, on a database of its own.
func benchFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	ctx := context.Background()
	dsn := storetest.NewDatabase(t)
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	owner, err := st.CreateOwner(ctx, store.NewOwner{Email: "bench@example.com", DisplayName: "Bench owner", Password: "bench password 1", WorkspaceName: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	project, err := st.CreateProject(ctx, owner.WorkspaceID, "Bench")
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{workspaceID: owner.WorkspaceID, runID: "test", ownerSlug: store.OwnerSlug(owner.ID)}
	for _, title := range []string{"Bench", "Physical"} {
		s, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: owner.WorkspaceID, ProjectID: project.ID, Type: "team_session", Title: title, CreatedBy: owner.ID})
		if err != nil {
			t.Fatal(err)
		}
		if title == "Bench" {
			fx.sessions = append(fx.sessions, s)
		} else {
			fx.physical = append(fx.physical, s)
		}
	}
	conn, token, _, err := st.CreateTokenConnection(ctx, store.NewConnection{WorkspaceID: owner.WorkspaceID, OwnerID: owner.ID,
		ClientName: "bench", Scopes: store.AllScopes, ProjectIDs: []int64{project.ID}}, "http://localhost/mcp", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.ClaimProfile(ctx, owner.WorkspaceID, conn.ID, "bench-0", "Bench agent 0")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Invite(ctx, owner.WorkspaceID, fx.sessions[0].ID, conn.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	fx.agents = []agent{{connectionID: conn.ID, token: token, slug: p.SenderSlug}}
	for i := range 12 {
		s := fx.sessions[0]
		if _, _, err := st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: owner.WorkspaceID, ConnectionID: conn.ID, SessionType: s.Type, SessionID: s.PublicID,
			Subject: "Seed", Body: "Seed body", IdempotencyKey: fmt.Sprintf("seed-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	fx.answerBytes = map[string]int{}
	for _, tc := range fx.tools() {
		fx.answerBytes[tc.name] = 2000
	}
	return fx, dsn
}

// TestEveryToolsPhysicalCallAnswersItsSize: each tool's physical call runs
// its statement on the schema as it is and answers a tools/call result of
// the tool's answer size, twice (the retry's second call writes nothing).
func TestEveryToolsPhysicalCallAnswersItsSize(t *testing.T) {
	t.Parallel()
	fx, dsn := benchFixture(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := httptest.NewServer(physicalCallHandler(pool))
	t.Cleanup(srv.Close)
	for _, tc := range fx.tools() {
		if !testfactory.HasPhysical(tc.name) {
			t.Errorf("%s has no physical statement", tc.name)
			continue
		}
		for i := range 2 {
			a := tc.phys(0, i)
			a.Bytes = fx.answerBytes[tc.name]
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
				"params": map[string]any{"name": tc.name, "arguments": tc.args(0, i), "physical": a}})
			req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
			req.Header.Set(timingHeader, "1")
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var out struct {
				ID     int `json:"id"`
				Result struct {
					StructuredContent struct {
						Rows []json.RawMessage `json:"rows"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			switch {
			case res.StatusCode != http.StatusOK:
				t.Errorf("%s, call %d: HTTP %d: %s", tc.name, i, res.StatusCode, b)
			case json.Unmarshal(b, &out) != nil || out.ID != 7:
				t.Errorf("%s, call %d: not a JSON-RPC answer to the request: %.200s", tc.name, i, b)
			case len(b) < a.Bytes:
				t.Errorf("%s, call %d: %d bytes, want at least %d", tc.name, i, len(b), a.Bytes)
			}
			if _, ok := parseServerTiming(res.Header.Get("Server-Timing")); !ok {
				t.Errorf("%s: no phases in Server-Timing %q", tc.name, res.Header.Get("Server-Timing"))
			}
		}
	}
}

// TestPromHistCountsPerBucket: cumulative Prometheus buckets, added up over
// the labels not asked for, become counts per bucket.
func TestPromHistCountsPerBucket(t *testing.T) {
	t.Parallel()
	ss := []promSample{
		{name: "x_bucket", labels: map[string]string{"tool": "a", "outcome": "ok", "le": "0.01"}, value: 90},
		{name: "x_bucket", labels: map[string]string{"tool": "a", "outcome": "ok", "le": "0.1"}, value: 99},
		{name: "x_bucket", labels: map[string]string{"tool": "a", "outcome": "ok", "le": "+Inf"}, value: 100},
		{name: "x_bucket", labels: map[string]string{"tool": "a", "outcome": "is_error", "le": "0.01"}, value: 0},
		{name: "x_bucket", labels: map[string]string{"tool": "a", "outcome": "is_error", "le": "0.1"}, value: 0},
		{name: "x_bucket", labels: map[string]string{"tool": "a", "outcome": "is_error", "le": "+Inf"}, value: 100},
		{name: "x_bucket", labels: map[string]string{"tool": "b", "outcome": "ok", "le": "0.01"}, value: 5},
	}
	h := promHist(ss, "x", map[string]string{"tool": "a"})
	if fmt.Sprint(h.Counts) != "[90 9 101]" {
		t.Fatalf("counts %v, want [90 9 101]", h.Counts)
	}
	if q := h.quantile(0.45); q != 10 {
		t.Errorf("p45 %v ms, want 10", q)
	}
	if q := h.quantile(0.49); q != 100 {
		t.Errorf("p49 %v ms, want 100", q)
	}
}
