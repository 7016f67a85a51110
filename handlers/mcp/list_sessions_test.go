package mcp_test

import (
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// TestListSessionsSaysWhyThereAreNone: a connection seated in a project but
// invited nowhere is told, in data and words, that an owner must invite it.
func TestListSessionsSaysWhyThereAreNone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	a := e.agent(ws, owner, store.AllScopes, e.project(ws, "P"))
	var out struct {
		Sessions []any  `json:"sessions"`
		Hint     string `json:"hint"`
	}
	res := a.call("list_sessions", nil)
	if err := jsonInto(res.StructuredContent, &out); err != nil || len(out.Sessions) != 0 ||
		!strings.HasPrefix(out.Hint, "No sessions yet: an owner invites this connection") || !strings.HasSuffix(text(res), "\n"+out.Hint) {
		t.Fatalf("%+v %v %q", out, err, text(res))
	}
}
