package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
)

// TestCollisionRadarAcrossReplicas: two agents seated in one project report
// the same repository written two ways, and the same branch, each through
// another replica. The second set_status names the first agent (data and
// line), list_agents on the other replica marks the second overlaps_you,
// and the owner's presence sidebar, served by either replica, shows one
// warning naming both.
func TestCollisionRadarAcrossReplicas(t *testing.T) {
	t.Parallel()
	rp := startReplicaPair(t, 2, startReplica)
	a, b, w := rp.a, rp.b, rp.w

	first, err := callTool(a.URL, w.tokens[0], "set_status", map[string]any{"repo": "https://github.com/Acme/Shop.git", "branch": "fix/orders-total", "task": "refunds"})
	if err != nil || first.isError || len(first.data["overlaps"].([]any)) != 0 {
		t.Fatalf("first set_status via A: %v %+v", err, first)
	}
	second, err := callTool(b.URL, w.tokens[1], "set_status", map[string]any{"repo": "acme/shop", "branch": "fix/orders-total"})
	if err != nil || second.isError {
		t.Fatalf("second set_status via B: %v %+v", err, second)
	}
	overlaps, _ := second.data["overlaps"].([]any)
	if len(overlaps) != 1 || overlaps[0].(map[string]any)["handle"] != "agent-0" || overlaps[0].(map[string]any)["sender_slug"] != "ext-agent-0" {
		t.Fatalf("set_status via B names %v, want agent-0", second.data["overlaps"])
	}
	const line = `@agent-0 is also on acme/shop fix/orders-total (task "refunds", just now): ask it with reply_to_sender (ext-agent-0) before you push.`
	if second.data["overlap_hint"] != line {
		t.Fatalf("overlap line %q, want %q", second.data["overlap_hint"], line)
	}

	agents, err := callTool(a.URL, w.tokens[0], "list_agents", map[string]any{})
	if err != nil || agents.isError {
		t.Fatalf("list_agents via A: %v %+v", err, agents)
	}
	marked := map[string]any{}
	for _, ag := range agents.data["agents"].([]any) {
		m := ag.(map[string]any)
		marked[m["handle"].(string)] = m["overlaps_you"]
	}
	if marked["agent-1"] != true || marked["agent-0"] != nil {
		t.Fatalf("list_agents via A: overlaps_you %v", marked)
	}

	for _, r := range []*replica{a, b} {
		owner := newOwnerBrowser(t, r.URL, w)
		owner.signIn()
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/sessions/%d/presence", r.URL, w.session.ID), nil)
		req.Header.Set("HX-Request", "true")
		res, err := owner.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
		warning := doc.Find(`[data-testid="overlap-warning"]`)
		if warning.Length() != 1 || warning.Find(`[data-testid="overlap-agents"]`).Text() != "@agent-0 and @agent-1" {
			t.Fatalf("sidebar on %s: %d warnings %q", r.URL, warning.Length(), warning.Text())
		}
	}
}

// TestAgentHookSessionStartNamesTheAgentsOnTheSameBranch: the checkout's
// SessionStart reports acme/widgets fix/rounding; another agent of the
// project said it is on github.com/Acme/Widgets, same branch: the context
// Claude Code gets names it.
func TestAgentHookSessionStartNamesTheAgentsOnTheSameBranch(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	s.connectAgent(t, m, "widgets-bot")
	quiet(t, "SessionStart alone on its branch", m.hookEvent(s.URL, "SessionStart", nil))

	c, tok, _, err := s.w.st.CreateTokenConnection(t.Context(), store.NewConnection{WorkspaceID: s.w.owner.WorkspaceID, OwnerID: s.w.owner.ID,
		ClientName: "peer", Scopes: store.AllScopes, ProjectIDs: []int64{s.w.session.ProjectID}}, s.URL+"/mcp", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.st.ClaimProfile(t.Context(), s.w.owner.WorkspaceID, c.ID, "agent-peer", "Peer"); err != nil {
		t.Fatal(err)
	}
	if r, err := callTool(s.URL, tok, "set_status", map[string]any{"repo": "github.com/Acme/Widgets", "branch": "fix/rounding", "task": "totals"}); err != nil || r.isError {
		t.Fatalf("the peer's set_status: %v %+v", err, r)
	}
	start := time.Now()
	text := hookAnswer(t, "SessionStart", m.hookEvent(s.URL, "SessionStart", nil))
	want := `@agent-peer is also on acme/widgets fix/rounding (task "totals", just now): ask it with reply_to_sender (ext-agent-peer) before you push.`
	if !strings.Contains(text, "say they are on this repository and branch") || !strings.Contains(text, want) {
		t.Fatalf("SessionStart context (after %s):\n%s", time.Since(start), text)
	}
}
