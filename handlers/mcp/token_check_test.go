package mcp_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// rpcAt posts one raw JSON-RPC message to the /mcp at url.
func rpcAt(t *testing.T, url, token, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestCachedTokenRefusedOnEveryReplica: a token two replicas have already
// checked, whose calls therefore send its check with their own statement,
// is refused on the very next call on each replica, as a token never seen
// is, and the refused call writes nothing: once its connection is revoked,
// once it expires by the database's clock, once its scopes narrow to read
// (403 for a write tool; a read still answers).
func TestCachedTokenRefusedOnEveryReplica(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm := e.team("team_session", store.RoleContributor, "alice", "bob", "carol")
	urls := []string{e.mcpURL(), e.replica(t).URL + "/mcp"}
	note := func(key string) string {
		return toolCall(2, "post_session_note", with(ref(tm.s), "subject", "s", "body", "b", "idempotency_key", key))
	}
	notes := func(a *agent) (n int) {
		e.sql().QueryRow(`SELECT count(*) FROM notes WHERE sender_connection_id = $1`, a.conn.ID).Scan(&n)
		return n
	}
	for _, a := range tm.agents {
		for _, u := range urls {
			for range 2 {
				if resp, body := rpcAt(t, u, a.token, toolCall(1, "list_sessions", map[string]any{})); resp.StatusCode != 200 || strings.Contains(body, `"isError":true`) {
					t.Fatalf("%s: %d %s", u, resp.StatusCode, body)
				}
			}
		}
	}
	const invalid = `Bearer error="invalid_token"`
	for _, c := range []struct {
		name   string
		a      *agent
		change func()
		status int
		header string
	}{
		{"revoked", tm.agents[0], func() {
			if err := e.st.RevokeConnection(e.ctx, tm.ws, tm.agents[0].conn.ID); err != nil {
				t.Fatal(err)
			}
		}, 401, invalid},
		{"expired", tm.agents[1], func() {
			e.sql().Exec(`UPDATE access_tokens SET expires_at = now() - interval '1 millisecond' WHERE connection_id = $1`, tm.agents[1].conn.ID)
		}, 401, invalid},
		{"narrowed to read", tm.agents[2], func() {
			e.sql().Exec(`UPDATE access_tokens SET scopes = '{osfoundry:read}' WHERE connection_id = $1`, tm.agents[2].conn.ID)
		}, 403, `Bearer error="insufficient_scope"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := notes(c.a)
			c.change()
			for i, u := range urls {
				resp, body := rpcAt(t, u, c.a.token, note(c.name+itoa(int64(i))))
				if resp.StatusCode != c.status || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), c.header) ||
					!strings.Contains(body, `"isError":true`) {
					t.Fatalf("replica %d: %d %q %s", i, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
				}
			}
			if n := notes(c.a); n != before {
				t.Fatalf("refused calls wrote %d notes", n-before)
			}
			if c.status == 403 {
				for i, u := range urls {
					if resp, body := rpcAt(t, u, c.a.token, toolCall(1, "list_sessions", map[string]any{})); resp.StatusCode != 200 || strings.Contains(body, `"isError":true`) {
						t.Fatalf("replica %d: a read after narrowing: %d %s", i, resp.StatusCode, body)
					}
				}
			}
		})
	}
}

// TestToolCallIsOneRoundTrip: once a replica has checked a token, each
// call of each hot tool is one round trip to PostgreSQL, the token's check
// and the tool's statement together, and its answer is the same as the
// first call's, unread hint included. (A post that writes nothing, a
// duplicate or a refusal, then asks why in statements of its own.)
func TestToolCallIsOneRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm := e.team("team_session", store.RoleContributor, "alice", "bob")
	a := tm.agents[0]
	e.ownerNote(tm.s, tm.owner, nil, store.MessageNote, "To everyone")
	session := `"session_type":"team_session","session_id":"` + tm.s.PublicID + `"`
	for _, c := range []struct {
		name, tool string
		args       func(i int) string
	}{
		{"set_status", "set_status", func(i int) string { return `{"task":"t` + itoa(int64(i)) + `"}` }},
		{"list_agents", "list_agents", func(int) string { return `{}` }},
		{"list_sessions", "list_sessions", func(int) string { return `{}` }},
		{"read_session_state", "read_session_state", func(int) string { return `{` + session + `}` }},
		{"poll_resource_events", "poll_resource_events", func(int) string {
			return `{"resource_type":"team_session","resource_id":"` + tm.s.PublicID + `","after_sequence":0}`
		}},
		{"post_session_note", "post_session_note", func(i int) string {
			return `{` + session + `,"subject":"s","body":"b","idempotency_key":"k` + itoa(int64(i)) + `"}`
		}},
		{"reply_to_sender", "reply_to_sender", func(i int) string {
			return `{` + session + `,"to":"` + store.OwnerSlug(tm.owner) + `","subject":"s","body":"b","idempotency_key":"r` + itoa(int64(i)) + `"}`
		}},
		{"read_session_mail", "read_session_mail", func(int) string { return `{` + session + `,"limit":1,"before_id":1}` }},
	} {
		t.Run(c.name, func(t *testing.T) {
			call := func(i int) string {
				return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":` + c.args(i) + `}}`
			}
			_, first := rpcAt(t, e.mcpURL(), a.token, call(0))
			before := e.st.StatementCounts()
			resp, again := rpcAt(t, e.mcpURL(), a.token, call(1))
			after := e.st.StatementCounts()
			if resp.StatusCode != 200 || strings.Contains(again, `"isError":true`) {
				t.Fatalf("%d %s", resp.StatusCode, again)
			}
			if trips := after.RequestRoundTrips - before.RequestRoundTrips; trips != 1 {
				t.Errorf("%d round trips, want 1 (%d statements)", trips, after.Request-before.Request)
			}
			if strings.Contains(first, `"unread"`) != strings.Contains(again, `"unread"`) || !strings.Contains(again, `"unread"`) {
				t.Errorf("the unread hint differs from the first call's:\n%s\n%s", first, again)
			}
		})
	}
}
