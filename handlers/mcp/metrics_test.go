package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/osfoundry/osfoundry/metrics/metricstest"
	"github.com/osfoundry/osfoundry/store"
)

// TestToolCallMetrics: every tool call is counted once by tool and outcome:
// a result, an isError result (from the tool, and from the early argument
// check), a 401 and a 403 refusal, a JSON-RPC error for an unknown tool, the
// calls of a batch one by one; other methods are not counted.
func TestToolCallMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	p := e.project(ws, "P")
	s := e.session(ws, p, "agent_session")
	a := e.agent(ws, owner, store.AllScopes, p)
	readOnly := e.agent(ws, owner, []string{store.ScopeRead}, p)
	a.claim("counter") // through a client session: one claim_connected_profile call

	rpc := func(token, body string, want int) {
		t.Helper()
		if res, b := e.rpc(token, body); res.StatusCode != want {
			t.Fatalf("%s: HTTP %d, want %d: %s", body, res.StatusCode, want, b)
		}
	}
	rpc(a.token, toolCall(1, "set_status", map[string]any{"task": "Counting"}), http.StatusOK)
	rpc(a.token, toolCall(2, "read_session_mail", ref(s)), http.StatusOK)                                    // not invited: isError
	rpc(a.token, toolCall(3, "set_status", map[string]any{"task": "a\x00b"}), http.StatusOK)                 // a NUL: isError before the tool
	rpc("", toolCall(4, "set_status", map[string]any{"task": "x"}), http.StatusUnauthorized)                 // refused
	rpc(readOnly.token, toolCall(5, "set_status", map[string]any{"task": "x"}), http.StatusForbidden)        // refused
	rpc(a.token, toolCall(6, "no_such_tool", map[string]any{}), http.StatusOK)                               // JSON-RPC error
	rpc(a.token, "["+toolCall(7, "list_agents", nil)+","+toolCall(8, "list_agents", nil)+"]", http.StatusOK) // a batch of two
	rpc("", `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, http.StatusOK)                                 // not a tool call

	rec := httptest.NewRecorder()
	e.m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	got := metricstest.Parse(t, rec.Body)
	const name = "osfoundry_mcp_tool_call_duration_seconds"
	for _, c := range []struct {
		tool, outcome string
		want          float64
	}{
		{"set_status", "ok", 1},
		{"set_status", "is_error", 1},
		{"set_status", "refused", 2},
		{"set_status", "error", 0},
		{"read_session_mail", "is_error", 1},
		{"read_session_mail", "ok", 0},
		{"list_agents", "ok", 2},
		{"unknown", "error", 1},
		{"claim_connected_profile", "ok", 1},
		{"claim_connected_profile", "is_error", 0},
	} {
		if v := got.Value(name, "tool", c.tool, "outcome", c.outcome); v != c.want {
			t.Errorf("%s{tool=%q,outcome=%q} = %v, want %v", name, c.tool, c.outcome, v, c.want)
		}
	}
}
