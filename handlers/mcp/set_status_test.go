package mcp_test

import (
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

type statusResult struct {
	Repo         *string    `json:"repo"`
	Branch       *string    `json:"branch"`
	Task         *string    `json:"task"`
	UpdatedAt    *time.Time `json:"updated_at"`
	SelfReported bool       `json:"self_reported"`
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

// TestSetStatusPartialUpdate walks {repo, branch, task} → {task} → {branch}
// → {} → {all null}, asserting the whole status after each step.
func TestSetStatusPartialUpdate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	a := e.agent(ws, owner, store.AllScopes)
	if msg := a.refused("set_status", map[string]any{"task": "x"}); msg != "Claim a profile first: call claim_connected_profile with a handle and display_name." {
		t.Fatalf("before claim: %q", msg)
	}
	a.claim("alice-claude")

	const null = "<null>"
	steps := []struct {
		args               map[string]any
		repo, branch, task string
		keepsUpdatedAt     bool
	}{
		{map[string]any{"repo": "osfoundry", "branch": "main", "task": "write tests"}, "osfoundry", "main", "write tests", false},
		{map[string]any{"task": "review"}, "osfoundry", "main", "review", false},
		{map[string]any{"branch": "mcp"}, "osfoundry", "mcp", "review", false},
		{map[string]any{}, "osfoundry", "mcp", "review", true},
		{map[string]any{"repo": nil, "branch": nil, "task": nil}, null, null, null, false},
	}
	var prev *time.Time
	for i, s := range steps {
		var got statusResult
		a.ok("set_status", s.args, &got)
		if str(got.Repo) != s.repo || str(got.Branch) != s.branch || str(got.Task) != s.task || !got.SelfReported || got.UpdatedAt == nil {
			t.Fatalf("step %d %s: got repo=%s branch=%s task=%s self_reported=%v updated_at=%v; want %s %s %s",
				i+1, mustJSON(s.args), str(got.Repo), str(got.Branch), str(got.Task), got.SelfReported, got.UpdatedAt, s.repo, s.branch, s.task)
		}
		if s.keepsUpdatedAt && !got.UpdatedAt.Equal(*prev) {
			t.Fatalf("step %d: {} changed updated_at from %v to %v", i+1, prev, got.UpdatedAt)
		}
		prev = got.UpdatedAt
	}
	// The row holds what the tool said.
	var n int
	if err := e.sql().QueryRow(`SELECT count(*) FROM statuses WHERE connection_id = $1 AND repo IS NULL AND branch IS NULL AND task IS NULL`, a.conn.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("stored status: %d %v", n, err)
	}
}

// TestSetStatusEmptyBeforeAnyStatus: {} on a fresh profile returns an
// all-null status and writes nothing.
func TestSetStatusEmptyBeforeAnyStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	a := e.agent(ws, owner, store.AllScopes)
	a.claim("bob")
	var got statusResult
	a.ok("set_status", map[string]any{}, &got)
	if got.Repo != nil || got.Branch != nil || got.Task != nil || got.UpdatedAt != nil || !got.SelfReported {
		t.Fatalf("got %+v", got)
	}
	var n int
	if err := e.sql().QueryRow(`SELECT count(*) FROM statuses`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("statuses rows: %d %v", n, err)
	}
}
