package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// mcpAnswer is one raw JSON-RPC tools/call answer.
type mcpAnswer struct {
	status  int
	header  string // WWW-Authenticate
	body    string
	isError bool
	text    string
	meta    []string // _meta["mcp/www_authenticate"]
	// rpcError is the message of a JSON-RPC error answer.
	rpcError string
}

// mcpCall posts one tools/call to /mcp with token (none when empty).
func (w *sweepWorld) mcpCall(t *testing.T, token, tool string, args map[string]any) mcpAnswer {
	t.Helper()
	return w.mcpCallAt(t, "/mcp", token, tool, args)
}

// mcpCallAt is mcpCall to another path (such as /mcp with a query).
// The answer of a JSON-RPC error carries it in rpcError.
func (w *sweepWorld) mcpCallAt(t *testing.T, path, token, tool string, args map[string]any) mcpAnswer {
	t.Helper()
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, w.app.srv.URL+path, bytes.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	a := mcpAnswer{status: res.StatusCode, header: res.Header.Get("WWW-Authenticate"), body: string(b)}
	var out struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Meta map[string][]string `json:"_meta"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Result == nil && out.Error == nil {
		t.Fatalf("%s: not a JSON-RPC answer (status %d): %s", tool, res.StatusCode, b)
	}
	if out.Error != nil {
		a.rpcError = out.Error.Message
		return a
	}
	a.isError = out.Result.IsError
	for _, c := range out.Result.Content {
		a.text += c.Text
	}
	a.meta = out.Result.Meta["mcp/www_authenticate"]
	return a
}

// toolScopes lists the tools as anyone sees them, with each one's scope.
func (w *sweepWorld) toolScopes() map[string]string {
	t := w.app.t
	req, _ := http.NewRequest(http.MethodPost, w.app.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Result struct {
			Tools []struct {
				Name            string `json:"name"`
				SecuritySchemes []struct {
					Scopes []string `json:"scopes"`
				} `json:"securitySchemes"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	scopes := map[string]string{}
	for _, tl := range out.Result.Tools {
		if len(tl.SecuritySchemes) != 1 || len(tl.SecuritySchemes[0].Scopes) != 1 {
			t.Fatalf("tool %s: securitySchemes %+v", tl.Name, tl.SecuritySchemes)
		}
		scopes[tl.Name] = tl.SecuritySchemes[0].Scopes[0]
	}
	if len(scopes) == 0 {
		t.Fatal("tools/list listed no tools")
	}
	return scopes
}

// sweepTool is one tool's row in the sweep.
type sweepTool struct {
	args map[string]any
	// session marks a tool that addresses A's session: an agent of another
	// workspace gets "session not found", an uninvited connection "not
	// invited to this session".
	session bool
	// uninvited is, for the other tools, the refusal A's uninvited
	// connection gets ("" when the call succeeds), and why.
	uninvited string
	why       string
}

func (w *sweepWorld) toolTable(ref map[string]any) map[string]sweepTool {
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range ref {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	events := map[string]any{"resource_type": ref["session_type"], "resource_id": ref["session_id"], "after_sequence": 0}
	return map[string]sweepTool{
		"claim_connected_profile": {args: map[string]any{"handle": secretHandle, "display_name": "Copycat"},
			uninvited: "handle taken", why: "handles are unique per workspace: free in B (nothing about A shows), taken in A"},
		"set_status":         {args: map[string]any{"task": "sweeping"}, why: "acts on the caller's own profile only"},
		"list_agents":        {args: map[string]any{}, why: "the caller's workspace only; statuses only where a project is shared"},
		"list_sessions":      {args: map[string]any{}, why: "the sessions the caller is invited to only"},
		"read_session_state": {args: ref, session: true},
		"read_session_mail":  {args: with("limit", 10), session: true},
		"post_session_note":  {args: with("subject", "Hijack", "body", "Hijack", "idempotency_key", "sweep-1"), session: true},
		"reply_to_sender": {args: with("to", store.OwnerSlug(w.alice.owner.ID), "subject", "Hijack", "body", "Hijack", "idempotency_key", "sweep-2"),
			session: true},
		"poll_resource_events": {args: events, session: true},
		"ask_owner":            {args: with("question", "Hijack?", "idempotency_key", "sweep-3"), session: true},
	}
}

// agentRows is A's agent's profile and status, to see that no call of
// another changed them.
func (w *sweepWorld) agentRows() string {
	var out string
	err := w.app.sql().QueryRow(`
		SELECT coalesce((SELECT p::text FROM agent_profiles p WHERE connection_id = $1), '') || '|' ||
		       coalesce((SELECT s::text FROM statuses s WHERE connection_id = $1), '')`, w.ag.connID).Scan(&out)
	if err != nil {
		w.app.t.Fatal(err)
	}
	return out
}

// TestSweepTools calls every MCP tool as an agent of another workspace, as
// an uninvited connection of the same workspace, with a read-only token and
// with none, after checking that A's own agent gets an answer.
func TestSweepTools(t *testing.T) {
	t.Parallel()
	w := newSweepWorld(t)
	scopes := w.toolScopes()
	ref := map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID}
	table := w.toolTable(ref)
	var tools []string
	for name := range scopes {
		if _, ok := table[name]; !ok {
			t.Errorf("tool %s has no row in the authorization sweep: add one", name)
			continue
		}
		tools = append(tools, name)
	}
	for name := range table {
		if _, ok := scopes[name]; !ok {
			t.Errorf("the sweep has a row for tool %s, which tools/list does not list", name)
		}
	}
	sort.Strings(tools)
	// What may never change through another's call: A's mail, events,
	// invitations, seats, sessions and projects, and A's agent's rows.
	guarded := func() string {
		return w.app.digest(0, "notes", "resource_events", "invitations", "project_seats", "sessions", "projects") + w.agentRows()
	}
	metadata := `resource_metadata="` + w.app.srv.URL + `/.well-known/oauth-protected-resource/mcp"`
	// Same workspace: the agent's handle and name are visible, nothing else.
	strangerSecrets := []string{secretProject, secretSession, secretSubject, secretBody, secretTask}
	// reclaim puts back the profiles the claim_connected_profile row changes.
	reclaim := func() {
		for _, ag := range []agent{w.ag, w.bobAg} {
			if _, err := w.app.store.ClaimProfile(context.Background(), ag.workspaceID, ag.connID, ag.handle, ag.name); err != nil {
				t.Fatal(err)
			}
		}
	}

	for _, name := range tools {
		row, scope := table[name], scopes[name]
		t.Run(name, func(t *testing.T) {
			defer reclaim()
			check := func(who string, a mcpAnswer, secrets []string) {
				t.Helper()
				if a.status >= 500 || a.rpcError != "" {
					t.Errorf("%s: status %d: %s", who, a.status, a.body)
				}
				noSecrets(t, who+" "+name, a.body, secrets)
			}

			// An agent of another workspace.
			before := guarded()
			a := w.mcpCall(t, w.bobAg.token, name, row.args)
			secrets := secretsOfA
			if name == "claim_connected_profile" {
				secrets = strangerSecrets // it claims A's handle in B: its own arguments come back
			}
			check("other workspace", a, secrets)
			if row.session {
				missing := w.mcpCall(t, w.bobAg.token, name, mapWith(row.args, "session_id", "no-such-session", "resource_id", "no-such-session"))
				if !a.isError || !strings.HasPrefix(a.text, "session not found") || a.text != missing.text {
					t.Errorf("other workspace: %v %q, want the refusal a missing session gets (%q)", a.isError, a.text, missing.text)
				}
			} else if a.isError {
				t.Errorf("other workspace (%s): refused: %s", row.why, a.text)
			}
			if guarded() != before {
				t.Errorf("other workspace: the call changed workspace A")
			}

			// A connection of A's workspace that is neither seated nor invited.
			before = guarded()
			a = w.mcpCall(t, w.stranger.token, name, row.args)
			check("uninvited", a, strangerSecrets)
			switch {
			case row.session && (!a.isError || !strings.HasPrefix(a.text, "not invited to this session")):
				t.Errorf("uninvited: %v %q, want \"not invited to this session\"", a.isError, a.text)
			case !row.session && row.uninvited == "" && a.isError:
				t.Errorf("uninvited (%s): refused: %s", row.why, a.text)
			case !row.session && row.uninvited != "" && (!a.isError || !strings.Contains(a.text, row.uninvited)):
				t.Errorf("uninvited (%s): %v %q, want %q", row.why, a.isError, a.text, row.uninvited)
			}
			if guarded() != before {
				t.Errorf("uninvited: the call changed what it may not")
			}

			// A read-only token (of a connection invited to the session).
			before = guarded()
			a = w.mcpCall(t, w.readOnly, name, row.args)
			check("read-only", a, nil)
			if scope == store.ScopeWrite {
				if a.status != http.StatusForbidden || !strings.Contains(a.header, `error="insufficient_scope"`) ||
					!strings.Contains(a.header, `scope="osfoundry:write"`) || !a.isError || len(a.meta) != 1 || a.meta[0] != a.header {
					t.Errorf("read-only on a write tool: status %d, header %q, isError %v, _meta %q", a.status, a.header, a.isError, a.meta)
				}
				if guarded() != before {
					t.Errorf("read-only: a refused write changed the database")
				}
			} else if a.status != http.StatusOK || a.isError {
				t.Errorf("read-only on a read tool: status %d: %s", a.status, a.body)
			}

			// No token: refused two ways at once.
			before = guarded()
			a = w.mcpCall(t, "", name, row.args)
			check("no token", a, secretsOfA)
			if a.status != http.StatusUnauthorized || !strings.HasPrefix(a.header, "Bearer ") || !strings.Contains(a.header, metadata) ||
				!strings.Contains(a.header, `scope="osfoundry:read osfoundry:write"`) || !a.isError || a.text != "Authentication required" ||
				len(a.meta) != 1 || a.meta[0] != a.header {
				t.Errorf("no token: status %d, header %q, isError %v, text %q, _meta %q", a.status, a.header, a.isError, a.text, a.meta)
			}
			if guarded() != before {
				t.Errorf("no token: the call changed the database")
			}

			// A valid token in the query string instead of the header.
			before = guarded()
			a = w.mcpCallAt(t, "/mcp?access_token="+url.QueryEscape(w.ag.token), "", name, row.args)
			noSecrets(t, "token in the query "+name, a.body, secretsOfA)
			if a.status != http.StatusBadRequest || !strings.Contains(a.rpcError, "Authorization header") {
				t.Errorf("token in the query string: status %d, error %q: %s", a.status, a.rpcError, a.body)
			}
			if guarded() != before {
				t.Errorf("token in the query string: the call changed the database")
			}

			// The control: A's own invited agent gets an answer, with A's
			// names in it where the tool reads the session.
			a = w.mcpCall(t, w.ag.token, name, row.args)
			if a.status != http.StatusOK || a.isError {
				t.Errorf("A's own agent: status %d: %s", a.status, a.body)
			}
			if (name == "read_session_state" || name == "read_session_mail") && !strings.Contains(a.body, secretSession) && !strings.Contains(a.body, secretSubject) {
				t.Errorf("A's own agent sees none of A's names, so the sweep proves nothing: %s", a.body)
			}
		})
	}
}

// mapWith copies m and replaces the keys it already has.
func mapWith(m map[string]any, kv ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if _, ok := out[kv[i]]; ok {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}
