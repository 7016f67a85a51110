package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/handlers/mcp"
	"github.com/osfoundry/osfoundry/store"
)

// diffWorld is one of the two identical worlds of TestDirectAnswersAsTheSDK:
// the same rows in the same order, so the same ids, and tokens by role.
type diffWorld struct {
	e      *env
	tokens map[string]string
	sdk    interface{ Load() int64 }
}

// newDiffWorld builds the world: an agent with every scope (alice, claimed,
// invited to two sessions), a read-only one (claimed, invited), an unclaimed
// one (invited) and one invited nowhere (claimed); the owner's note to the
// whole session and reply to alice, an agent's reply to alice, so that
// results carry the unread hint.
func newDiffWorld(t *testing.T, sdkOnly bool) *diffWorld {
	e := newEnv(t)
	if sdkOnly {
		mcp.SDKOnly(e.h)
	}
	ws, owner := e.workspace("W")
	p := e.project(ws, "P")
	s1, s2 := e.session(ws, p, "team_session"), e.session(ws, p, "agent_session")
	e.sql().Exec(`UPDATE sessions SET public_id = 's_' || id`)
	s1.PublicID, s2.PublicID = "s_"+itoa(s1.ID), "s_"+itoa(s2.ID)
	w := &diffWorld{e: e, tokens: map[string]string{}}
	for _, a := range []struct {
		role, handle string
		scopes       []string
		sessions     []*store.Session
	}{
		{"alice", "alice", store.AllScopes, []*store.Session{s1, s2}},
		{"reader", "reader", []string{store.ScopeRead}, []*store.Session{s1}},
		{"unclaimed", "", store.AllScopes, []*store.Session{s1}},
		{"outsider", "outsider", store.AllScopes, nil},
	} {
		ag := e.agent(ws, owner, a.scopes, p)
		for _, s := range a.sessions {
			ag.invite(s, store.RoleContributor)
		}
		if a.handle != "" {
			if _, err := e.st.ClaimProfile(e.ctx, ws, ag.conn.ID, a.handle, strings.ToUpper(a.handle)); err != nil {
				t.Fatal(err)
			}
		}
		w.tokens[a.role] = ag.token
	}
	alice := "ext-alice"
	e.sql().QueryRow(`SELECT sender_slug FROM connections c JOIN agent_profiles p ON p.connection_id = c.id WHERE p.handle = 'alice'`).Scan(&alice)
	e.ownerNote(s1, owner, nil, store.MessageNote, "To everyone <b>&</b>")
	e.ownerNote(s1, owner, &alice, store.MessageReply, "To alice")
	e.ownerNote(s2, owner, &alice, store.MessageReply, "Also to alice \u2028")
	w.sdk = mcp.CountSDK(e.h)
	return w
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// diffRequest is one row: a raw body, its token (a role of diffWorld, or
// the literal token), its headers, and whether the SDK answers it (else the
// front does: a plain call directly, or a refusal before any tool runs).
type diffRequest struct {
	name   string
	token  string
	body   string
	header []string
	sdk    bool
}

// times are timestamps written by a call (set_status's updated_at, a note's
// created_at): with each world's origin, the only bytes two worlds may
// differ by.
var times = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

// send posts one request to the world's /mcp.
func (w *diffWorld) send(t *testing.T, r diffRequest) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.e.mcpURL(), strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok, ok := w.tokens[r.token]; ok {
		req.Header.Set("Authorization", "Bearer "+tok)
	} else if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	for i := 0; i+1 < len(r.header); i += 2 {
		if r.header[i+1] == "<none>" {
			req.Header.Del(r.header[i])
			continue
		}
		req.Header.Add(r.header[i], r.header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range resp.Header {
		for i := range v {
			v[i] = strings.ReplaceAll(v[i], w.e.base, "<origin>")
		}
		resp.Header[k] = v
	}
	return resp, strings.ReplaceAll(times.ReplaceAllString(string(b), "<time>"), w.e.base, "<origin>")
}

// TestDirectAnswersAsTheSDK runs every request of a table through two
// identical worlds, one answering through the SDK alone, the other as
// served (a plain tools/call answered directly, anything else by the SDK),
// and compares status, the headers that matter and the body byte for byte
// (timestamps written by the calls aside). The table covers every tool,
// success and refusal, the unread hint, argument errors, the double
// refusal, and the requests that must go to the SDK: other protocol
// versions, _meta, odd ids, members, headers and bodies.
// leftToTheSDK reports whether body is one call of a tool whose plain calls
// the front leaves to the SDK (mcp.PlainTool).
func leftToTheSDK(body string) bool {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	return json.Unmarshal([]byte(body), &m) == nil && m.Method == "tools/call" && m.Params.Name != "" && !mcp.PlainTool(m.Params.Name)
}

// refusedByTheFront are the rows of calls the front refuses before any
// tool, or the SDK, sees them.
var refusedByTheFront = map[string]bool{"no token": true, "bad token": true, "read-only token, write tool": true, "NUL in an argument": true, "ask_owner read-only": true,
	"tool name in two cases": true}

func TestDirectAnswersAsTheSDK(t *testing.T) {
	ref, got := newDiffWorld(t, true), newDiffWorld(t, false)
	call := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	const s1, s2 = `"session_type":"team_session","session_id":"s_1"`, `"session_type":"agent_session","session_id":"s_2"`
	note := func(key, subject string) string {
		return call("post_session_note", `{`+s1+`,"subject":"`+subject+`","body":"Body <i>&amp;</i> \u00e9","idempotency_key":"`+key+`"}`)
	}
	rows := []diffRequest{
		// Every tool, as the usual agent calls it; results carry alice's unread hint.
		{name: "set_status", token: "alice", body: call("set_status", `{"task":"step 1","repo":"osfoundry","branch":"main"}`)},
		{name: "set_status partial", token: "alice", body: call("set_status", `{"task":null}`)},
		{name: "set_status empty", token: "alice", body: call("set_status", `{}`)},
		{name: "set_status no arguments", token: "alice", body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"set_status"}}`},
		{name: "post_session_note", token: "alice", body: note("k1", "Progress")},
		{name: "post_session_note again", token: "alice", body: note("k1", "Progress")},
		{name: "post_session_note key reused", token: "alice", body: note("k1", "Other")},
		{name: "reply_to_sender owner", token: "alice", body: call("reply_to_sender", `{`+s1+`,"to":"owner-1","subject":"Re","body":"b","idempotency_key":"r1"}`)},
		{name: "reply_to_sender self", token: "alice", body: call("reply_to_sender", `{`+s1+`,"to":"ext-alice","subject":"Re","body":"b","idempotency_key":"r2"}`)},
		{name: "reply_to_sender unknown", token: "alice", body: call("reply_to_sender", `{`+s1+`,"to":"ext-nobody","subject":"Re","body":"b","idempotency_key":"r3"}`)},
		{name: "ask_owner", token: "alice", body: call("ask_owner", `{`+s1+`,"question":"Which <b>one</b>?","options":["A","B"],"idempotency_key":"q1"}`)},
		{name: "ask_owner again, waiting a second", token: "alice", body: call("ask_owner", `{`+s1+`,"question":"Which <b>one</b>?","options":["A","B"],"wait_seconds":1,"idempotency_key":"q1"}`)},
		{name: "ask_owner key reused", token: "alice", body: call("ask_owner", `{`+s1+`,"question":"Which?","idempotency_key":"q1"}`)},
		{name: "ask_owner with a note's key", token: "alice", body: call("ask_owner", `{`+s1+`,"question":"Which?","idempotency_key":"k1"}`)},
		{name: "ask_owner claim first", token: "unclaimed", body: call("ask_owner", `{`+s1+`,"question":"Which?","idempotency_key":"u2"}`)},
		{name: "ask_owner read-only", token: "reader", body: call("ask_owner", `{`+s1+`,"question":"Which?","idempotency_key":"u3"}`)},
		{name: "list_agents", token: "alice", body: call("list_agents", `{}`)},
		{name: "list_sessions", token: "alice", body: call("list_sessions", `{}`)},
		{name: "read_session_state", token: "alice", body: call("read_session_state", `{`+s1+`}`)},
		{name: "poll_resource_events", token: "alice", body: call("poll_resource_events", `{"resource_type":"team_session","resource_id":"s_1","after_sequence":0}`)},
		{name: "read_session_mail page", token: "alice", body: call("read_session_mail", `{`+s1+`,"limit":2}`)},
		{name: "read_session_mail older", token: "alice", body: call("read_session_mail", `{`+s1+`,"limit":2,"before_id":3}`)},
		{name: "read_session_mail other session", token: "alice", body: call("read_session_mail", `{`+s2+`}`)},
		{name: "list_agents after reading", token: "alice", body: call("list_agents", `{}`)},
		{name: "claim_connected_profile again", token: "alice", body: call("claim_connected_profile", `{"handle":"alice","display_name":"Alice"}`)},
		{name: "claim_connected_profile taken", token: "unclaimed", body: call("claim_connected_profile", `{"handle":"alice","display_name":"A"}`)},

		// Refusals of the tools.
		{name: "claim first: set_status", token: "unclaimed", body: call("set_status", `{"task":"x"}`)},
		{name: "claim first: post_session_note", token: "unclaimed", body: note("u1", "S")},
		{name: "not invited", token: "outsider", body: note("o1", "S")},
		{name: "no such session", token: "alice", body: call("read_session_mail", `{"session_type":"loop_session","session_id":"nope"}`)},
		{name: "invalid arguments", token: "alice", body: call("read_session_mail", `{`+s1+`,"limit":99,"extra":1}`)},
		{name: "missing arguments", token: "alice", body: call("post_session_note", `{`+s1+`}`)},
		{name: "wrong type", token: "alice", body: call("set_status", `{"task":5}`)},
		{name: "too long", token: "alice", body: call("set_status", `{"repo":"`+strings.Repeat("r", 301)+`"}`)},

		// The double refusal, before any tool runs.
		{name: "no token", body: call("set_status", `{}`)},
		{name: "bad token", token: "osf_at_nope", body: call("set_status", `{}`)},
		{name: "read-only token, write tool", token: "reader", body: call("set_status", `{}`)},
		{name: "read-only token, read tool", token: "reader", body: call("list_sessions", `{}`)},

		// Ids the SDK keeps as they are, and others.
		{name: "string id", token: "alice", body: `{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`},
		{name: "string id with HTML", token: "alice", body: `{"jsonrpc":"2.0","id":"<a&b>","method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`},
		{name: "negative id", token: "alice", body: `{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`},
		{name: "zero id", token: "alice", body: `{"id":0,"method":"tools/call","params":{"arguments":{},"name":"list_sessions"},"jsonrpc":"2.0"}`},
		{name: "fractional id", token: "alice", body: `{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`, sdk: true},
		{name: "exponent id", token: "alice", body: `{"jsonrpc":"2.0","id":1e3,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`, sdk: true},
		{name: "huge id", token: "alice", body: `{"jsonrpc":"2.0","id":123456789012345678901,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`, sdk: true},

		// Members named twice, or in two cases: refused before any check reads them.
		{name: "key in another case", token: "alice", body: `{"jsonrpc":"2.0","id":7,"Method":"tools/call","method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`},
		{name: "duplicate key", token: "alice", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`},
		{name: "tool name in two cases", token: "reader", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"post_session_note","Name":"list_agents","arguments":{}}}`},

		// Requests only the SDK answers.
		{name: "unknown tool", token: "alice", body: call("no_such_tool", `{}`), sdk: true},
		{name: "_meta", token: "alice", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_sessions","arguments":{},"_meta":{"progressToken":"p"}}}`, sdk: true},
		{name: "extra member", token: "alice", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","extra":1,"params":{"name":"list_sessions","arguments":{}}}`, sdk: true},
		{name: "escaped key", token: "alice", body: `{"jsonrpc":"2.0","id":7,"\u006dethod":"tools/call","params":{"name":"list_sessions","arguments":{}}}`, sdk: true},
		{name: "key in another case only", token: "alice", body: `{"jsonrpc":"2.0","id":7,"Method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`, sdk: true},
		{name: "escaped tool name", token: "alice", body: call("list_sessi\\u006fns", `{}`), sdk: true},
		{name: "arguments not an object", token: "alice", body: call("list_sessions", `[]`), sdk: true},
		{name: "arguments null", token: "alice", body: call("list_sessions", `null`), sdk: true},
		{name: "trailing data", token: "alice", body: call("list_sessions", `{}`) + ` {}`, sdk: true},
		{name: "old jsonrpc", token: "alice", body: `{"jsonrpc":"1.0","id":7,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`, sdk: true},
		{name: "batch", token: "alice", body: `[` + call("list_sessions", `{}`) + `]`, sdk: true},
		{name: "NUL in an argument", token: "alice", body: call("set_status", `{"task":"a\u0000b"}`)},
		{name: "protocol 2026-07-28", token: "alice", body: call("list_sessions", `{}`), header: []string{"Mcp-Protocol-Version", "2026-07-28"}, sdk: true},
		{name: "protocol 2026-07-28 with _meta", token: "alice",
			body:   `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_sessions","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			header: []string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "list_sessions"}, sdk: true},
		{name: "unknown protocol", token: "alice", body: call("list_sessions", `{}`), header: []string{"Mcp-Protocol-Version", "1999-01-01"}, sdk: true},
		{name: "two protocol headers", token: "alice", body: call("list_sessions", `{}`), header: []string{"Mcp-Protocol-Version", "2025-06-18", "Mcp-Protocol-Version", "2025-03-26"}, sdk: true},
		{name: "Last-Event-ID", token: "alice", body: call("list_sessions", `{}`), header: []string{"Last-Event-ID", "x_1"}, sdk: true},
		{name: "JSON not accepted", token: "alice", body: call("list_sessions", `{}`), header: []string{"Accept", "<none>", "Accept", "text/event-stream"}, sdk: true},
		{name: "not JSON", token: "alice", body: call("list_sessions", `{}`), header: []string{"Content-Type", "<none>", "Content-Type", "text/plain"}, sdk: true},
	}
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		rows = append(rows, diffRequest{name: "protocol " + v, token: "alice", body: call("set_status", `{"branch":"b"}`),
			header: []string{"Mcp-Protocol-Version", v}},
			diffRequest{name: "protocol " + v + ", a read", token: "alice", body: call("list_sessions", `{}`),
				header: []string{"Mcp-Protocol-Version", v}})
	}
	rows = append(rows,
		diffRequest{name: "Accept */*", token: "alice", body: call("list_sessions", `{}`), header: []string{"Accept", "<none>", "Accept", "*/*"}},
		diffRequest{name: "Accept in two headers", token: "alice", body: call("list_sessions", `{}`),
			header: []string{"Accept", "<none>", "Accept", "application/json;q=0.9", "Accept", "text/event-stream"}},
		diffRequest{name: "charset", token: "alice", body: call("list_sessions", `{}`), header: []string{"Content-Type", "<none>", "Content-Type", "application/json; charset=utf-8"}},
		diffRequest{name: "spaces between members", token: "alice",
			body: " {\n \"jsonrpc\" : \"2.0\" , \"id\" : 7 , \"method\" : \"tools/call\" , \"params\" : { \"name\" : \"list_sessions\" , \"arguments\" : { } } }\n"},
		diffRequest{name: "Mcp-Session-Id sent", token: "alice", body: call("list_sessions", `{}`), header: []string{"Mcp-Session-Id", "abc"}},
		diffRequest{name: "HTML in a result", token: "alice", body: call("set_status", `{"task":"<b>&amp;</b> \u2028"}`)},
		diffRequest{name: "owner replies, then a read", token: "alice", body: call("read_session_mail", `{`+s1+`}`)},
	)
	// The answers built at start, and the requests that differ from them.
	initialize := func(params string) string {
		return `{"jsonrpc":"2.0","id":"i-1","method":"initialize","params":` + params + `}`
	}
	const client = `"capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"Claude <Code>","version":"2.1"}`
	for _, v := range []string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		rows = append(rows,
			diffRequest{name: "tools/list " + v, body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, header: []string{"Mcp-Protocol-Version", v}},
			diffRequest{name: "tools/list with a token " + v, token: "alice", body: `{"jsonrpc":"2.0","id":"t","method":"tools/list","params":{}}`,
				header: []string{"Mcp-Protocol-Version", v}},
			diffRequest{name: "ping " + v, body: `{"jsonrpc":"2.0","id":4,"method":"ping"}`, header: []string{"Mcp-Protocol-Version", v}},
		)
		if v != "" {
			rows = append(rows, diffRequest{name: "initialize " + v, body: initialize(`{"protocolVersion":"` + v + `",` + client + `}`)})
		}
	}
	rows = append(rows,
		diffRequest{name: "initialize, members in another order", body: initialize(`{"clientInfo":{"name":"c","version":"1"},"capabilities":{},"protocolVersion":"2025-06-18"}`)},
		diffRequest{name: "initialize with a token", token: "reader", body: initialize(`{"protocolVersion":"2025-06-18",` + client + `}`)},
		diffRequest{name: "initialize, unknown version", body: initialize(`{"protocolVersion":"2024-01-01",` + client + `}`), sdk: true},
		diffRequest{name: "initialize, newest version", body: initialize(`{"protocolVersion":"2026-07-28",` + client + `}`), sdk: true},
		diffRequest{name: "initialize, version header", body: initialize(`{"protocolVersion":"2025-06-18",` + client + `}`),
			header: []string{"Mcp-Protocol-Version", "2025-06-18"}, sdk: true},
		diffRequest{name: "initialize, capabilities of the wrong type", body: initialize(`{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":"yes"}},"clientInfo":{"name":"c","version":"1"}}`), sdk: true},
		diffRequest{name: "initialize without clientInfo", body: initialize(`{"protocolVersion":"2025-06-18","capabilities":{}}`), sdk: true},
		diffRequest{name: "initialize with _meta", body: initialize(`{"protocolVersion":"2025-06-18",` + client + `,"_meta":{}}`), sdk: true},
		diffRequest{name: "initialize without params", body: `{"jsonrpc":"2.0","id":5,"method":"initialize"}`, sdk: true},
		diffRequest{name: "tools/list with a cursor", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}`, sdk: true},
		diffRequest{name: "tools/list with _meta", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`, sdk: true},
		diffRequest{name: "tools/list with a name", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"name":"x"}}`, sdk: true},
		diffRequest{name: "tools/list, protocol 2026-07-28", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, header: []string{"Mcp-Protocol-Version", "2026-07-28"}, sdk: true},
		diffRequest{name: "tools/list as a notification", body: `{"jsonrpc":"2.0","method":"tools/list"}`},
		diffRequest{name: "tools/list, odd id", body: `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, sdk: true},
		diffRequest{name: "tools/call with an initialize's params", token: "alice",
			body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_sessions","arguments":{},"protocolVersion":"2025-06-18"}}`, sdk: true},
	)

	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			before := got.sdk.Load()
			want, wantBody := ref.send(t, r)
			resp, body := got.send(t, r)
			if resp.StatusCode != want.StatusCode || body != wantBody {
				t.Errorf("direct %d %s\nSDK    %d %s", resp.StatusCode, body, want.StatusCode, wantBody)
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "WWW-Authenticate", "Mcp-Session-Id", "Allow"} {
				if g, w := resp.Header.Values(h), want.Header.Values(h); strings.Join(g, "\n") != strings.Join(w, "\n") {
					t.Errorf("%s: direct %q, SDK %q", h, g, w)
				}
			}
			wantSDK := r.sdk || (leftToTheSDK(r.body) && !refusedByTheFront[r.name])
			if sdk := got.sdk.Load() - before; (sdk > 0) != wantSDK {
				t.Errorf("answered by the SDK: %v, want %v", sdk > 0, wantSDK)
			}
			if bytes.Contains([]byte(wantBody), []byte(`"unread"`)) != strings.Contains(body, `"unread"`) {
				t.Errorf("unread hint differs")
			}
		})
	}
}
