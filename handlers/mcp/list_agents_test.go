package mcp_test

import (
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

type agentsResult struct {
	Agents []struct {
		Handle       string  `json:"handle"`
		DisplayName  string  `json:"display_name"`
		Presence     string  `json:"presence"`
		Task         *string `json:"task"`
		SelfReported *bool   `json:"self_reported"`
	} `json:"agents"`
}

// TestListAgentsVisibility: two workspaces; in the first, projects P1 and
// P2 with ann in P1, bob in both, cat in P2 and dan in none. Everyone sees every
// agent of its own workspace with a presence tier, and a status only for
// agents it shares a project with (and itself); nobody sees the other
// workspace.
func TestListAgentsVisibility(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W1")
	p1, p2 := e.project(ws, "P1"), e.project(ws, "P2")
	ws2, owner2 := e.workspace("W2")
	px := e.project(ws2, "PX")
	agents := map[string]*agent{
		"ann": e.agent(ws, owner, store.AllScopes, p1),
		"bob": e.agent(ws, owner, store.AllScopes, p1, p2),
		"cat": e.agent(ws, owner, store.AllScopes, p2),
		"dan": e.agent(ws, owner, store.AllScopes),
		"eve": e.agent(ws2, owner2, store.AllScopes, px),
	}
	for h, a := range agents {
		a.claim(h)
		a.ok("set_status", map[string]any{"task": "task of " + h}, nil)
	}
	// Presence tiers come from the last authenticated call.
	for h, age := range map[string]time.Duration{"bob": 10 * time.Minute, "cat": 3 * time.Hour, "dan": 48 * time.Hour} {
		e.sql().SetLastSeen(agents[h].conn.ID, age)
	}
	// Revoked connections' agents are gone from the list.
	gone := e.agent(ws, owner, store.AllScopes, p1)
	gone.claim("gone")
	if err := e.st.RevokeConnection(e.ctx, ws, gone.conn.ID); err != nil {
		t.Fatal(err)
	}

	tier := map[string]string{"ann": "active", "bob": "idle", "cat": "away", "dan": "offline", "eve": "active"}
	want := map[string]struct {
		sees       []string
		withStatus map[string]bool
	}{
		"ann": {[]string{"ann", "bob", "cat", "dan"}, map[string]bool{"ann": true, "bob": true}},
		"bob": {[]string{"ann", "bob", "cat", "dan"}, map[string]bool{"ann": true, "bob": true, "cat": true}},
		"cat": {[]string{"ann", "bob", "cat", "dan"}, map[string]bool{"bob": true, "cat": true}},
		"dan": {[]string{"ann", "bob", "cat", "dan"}, map[string]bool{"dan": true}},
		"eve": {[]string{"eve"}, map[string]bool{"eve": true}},
	}
	called := map[string]bool{}
	for _, viewer := range []string{"ann", "bob", "cat", "dan", "eve"} {
		var got agentsResult
		agents[viewer].ok("list_agents", map[string]any{}, &got)
		called[viewer] = true
		w := want[viewer]
		if len(got.Agents) != len(w.sees) {
			t.Fatalf("%s sees %s, want %v", viewer, mustJSON(got), w.sees)
		}
		for i, ag := range got.Agents {
			if ag.Handle != w.sees[i] {
				t.Fatalf("%s: agent %d is %s, want %s", viewer, i, ag.Handle, w.sees[i])
			}
			// A list_agents call of its own (the viewer's just now) made it active.
			wantTier := tier[ag.Handle]
			if called[ag.Handle] {
				wantTier = "active"
			}
			if ag.Presence != wantTier {
				t.Errorf("%s sees %s as %s, want %s", viewer, ag.Handle, ag.Presence, wantTier)
			}
			if w.withStatus[ag.Handle] {
				if ag.Task == nil || *ag.Task != "task of "+ag.Handle || ag.SelfReported == nil || !*ag.SelfReported {
					t.Errorf("%s should see %s's status: %s", viewer, ag.Handle, mustJSON(ag))
				}
			} else if ag.Task != nil || ag.SelfReported != nil {
				t.Errorf("%s must not see %s's status: %s", viewer, ag.Handle, mustJSON(ag))
			}
		}
	}
}
