package mcp_test

import (
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

type overlapResult struct {
	Overlaps []struct {
		Handle      string  `json:"handle"`
		DisplayName string  `json:"display_name"`
		SenderSlug  string  `json:"sender_slug"`
		Repo        *string `json:"repo"`
		Branch      *string `json:"branch"`
		Task        *string `json:"task"`
		UpdatedAt   string  `json:"updated_at"`
	} `json:"overlaps"`
	OverlapHint string `json:"overlap_hint"`
}

// TestSetStatusNamesTheAgentsOnTheSameBranch: two agents seated in one
// project on the same repository (written four ways) and branch overlap:
// set_status answers with the other agent in overlaps and in one line of
// text, and list_agents marks it overlaps_you. Another branch, another
// project, a status older than a day or a revoked connection is no overlap.
func TestSetStatusNamesTheAgentsOnTheSameBranch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm := e.team("team_session", store.RoleContributor, "ada-claude", "bob-claude")
	ada, bob := tm.agents[0], tm.agents[1]
	elsewhere := e.agent(tm.ws, tm.owner, store.AllScopes, e.project(tm.ws, "Other"))
	elsewhere.claim("carol-codex")
	elsewhere.ok("set_status", map[string]any{"repo": "acme/shop", "branch": "fix/orders-total"}, nil)

	var r overlapResult
	bob.ok("set_status", map[string]any{"repo": "git@github.com:acme/shop", "branch": "fix/orders-total", "task": "refunds"}, &r)
	if len(r.Overlaps) != 0 || r.OverlapHint != "" {
		t.Fatalf("bob overlaps with nobody yet (carol shares no project): %+v", r)
	}
	for _, written := range []string{"https://github.com/Acme/Shop.git", "github.com/acme/shop", "acme/shop"} {
		res := ada.call("set_status", map[string]any{"repo": written, "branch": "fix/orders-total"})
		if res.IsError {
			t.Fatalf("set_status: %s", text(res))
		}
		if err := jsonInto(res.StructuredContent, &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Overlaps) != 1 || r.Overlaps[0].Handle != "bob-claude" || r.Overlaps[0].DisplayName != "BOB-CLAUDE" ||
			r.Overlaps[0].SenderSlug != tm.slugs[1] || str(r.Overlaps[0].Repo) != "git@github.com:acme/shop" ||
			str(r.Overlaps[0].Branch) != "fix/orders-total" || str(r.Overlaps[0].Task) != "refunds" || r.Overlaps[0].UpdatedAt == "" {
			t.Fatalf("%s: overlaps %+v", written, r.Overlaps)
		}
		const line = `@bob-claude is also on acme/shop fix/orders-total (task "refunds", just now): ask it with reply_to_sender (ext-bob-claude) before you push.`
		if r.OverlapHint != line || !strings.HasSuffix(text(res), "\n"+line) {
			t.Fatalf("%s: the line is %q; text %q", written, r.OverlapHint, text(res))
		}
	}
	// {} changes nothing and still names the overlap.
	ada.ok("set_status", map[string]any{}, &r)
	if len(r.Overlaps) != 1 {
		t.Fatalf("{}: %+v", r)
	}

	var agents struct {
		Agents []struct {
			Handle      string `json:"handle"`
			OverlapsYou bool   `json:"overlaps_you"`
		} `json:"agents"`
	}
	ada.ok("list_agents", nil, &agents)
	marked := map[string]bool{}
	for _, a := range agents.Agents {
		marked[a.Handle] = a.OverlapsYou
	}
	if !marked["bob-claude"] || marked["ada-claude"] || marked["carol-codex"] || len(marked) != 3 {
		t.Fatalf("list_agents overlaps_you: %v", marked)
	}

	// The overlaps cost no round trip: a tools/call of set_status is the
	// token's statement and set_status's own, as before the radar.
	before := e.st.StatementCounts().Request
	if resp, body := e.rpc(ada.token, toolCall(9, "set_status", map[string]any{"task": "rounding"})); resp.StatusCode != 200 || !strings.Contains(string(body), "bob-claude") {
		t.Fatalf("set_status: %d %s", resp.StatusCode, body)
	}
	if n := e.st.StatementCounts().Request - before; n != 2 {
		t.Fatalf("set_status with an overlap sent %d statements, want 2 (the token check and set_status)", n)
	}

	t.Run("another branch", func(t *testing.T) {
		ada.ok("set_status", map[string]any{"branch": "feat/one-page-checkout"}, &r)
		if len(r.Overlaps) != 0 {
			t.Fatalf("%+v", r)
		}
		ada.ok("set_status", map[string]any{"branch": "fix/orders-total"}, &r)
		if len(r.Overlaps) != 1 {
			t.Fatalf("back on the branch: %+v", r)
		}
	})
	t.Run("a status older than a day", func(t *testing.T) {
		e.sql().Exec(`UPDATE statuses SET updated_at = now() - interval '25 hours' WHERE connection_id = $1`, bob.conn.ID)
		ada.ok("set_status", map[string]any{}, &r)
		if len(r.Overlaps) != 0 {
			t.Fatalf("%+v", r)
		}
		bob.ok("set_status", map[string]any{"task": "refunds, again"}, nil)
	})
	t.Run("a revoked connection", func(t *testing.T) {
		if err := e.st.RevokeConnection(e.ctx, tm.ws, bob.conn.ID); err != nil {
			t.Fatal(err)
		}
		ada.ok("set_status", map[string]any{}, &r)
		if len(r.Overlaps) != 0 || strings.Contains(text(ada.call("set_status", map[string]any{})), "bob-claude") {
			t.Fatalf("%+v", r)
		}
	})
}
