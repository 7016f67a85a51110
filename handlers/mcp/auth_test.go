package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/handlers/mcp"
	"github.com/osfoundry/osfoundry/store"
)

type refusalBody struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Result  *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Meta       map[string][]string `json:"_meta"`
		ResultType string              `json:"resultType"`
	} `json:"result"`
	Error json.RawMessage `json:"error"`
}

// TestRefusals asserts the double refusal (an HTTP 401 with its
// WWW-Authenticate header, and an isError result for clients that never
// read headers) for each way a call can lack a valid token: status, every
// WWW-Authenticate field, and the JSON-RPC isError result carrying the same
// header.
func TestRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	valid := e.agent(ws, owner, store.AllScopes)
	expired := e.agent(ws, owner, store.AllScopes)
	e.sql().ExpireTokens(expired.conn.ID)
	revoked := e.agent(ws, owner, store.AllScopes)
	if err := e.st.RevokeConnection(e.ctx, ws, revoked.conn.ID); err != nil {
		t.Fatal(err)
	}
	otherResource, _, err := e.st.MintAccessToken(e.ctx, valid.conn.ID, "http://other.example/mcp", store.AllScopes, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := e.agent(ws, owner, []string{store.ScopeRead})
	metadata := e.base + "/.well-known/oauth-protected-resource/mcp"

	cases := []struct {
		name   string
		token  string
		tool   string
		status int
		header string
		text   string
	}{
		{"no token", "", "set_status", 401,
			`Bearer resource_metadata="` + metadata + `", scope="osfoundry:read osfoundry:write", error_description="Connect osFoundry to continue"`, "Authentication required"},
		{"no token, read tool", "", "list_agents", 401,
			`Bearer resource_metadata="` + metadata + `", scope="osfoundry:read osfoundry:write", error_description="Connect osFoundry to continue"`, "Authentication required"},
		{"garbage token", "osf_at_garbage", "set_status", 401,
			`Bearer error="invalid_token", resource_metadata="` + metadata + `", scope="osfoundry:read osfoundry:write", error_description="Connect osFoundry to continue"`, "Authentication required"},
		{"expired token", expired.token, "set_status", 401,
			`Bearer error="invalid_token", resource_metadata="` + metadata + `", scope="osfoundry:read osfoundry:write", error_description="Connect osFoundry to continue"`, "Authentication required"},
		{"revoked connection", revoked.token, "set_status", 401,
			`Bearer error="invalid_token", resource_metadata="` + metadata + `", scope="osfoundry:read osfoundry:write", error_description="Connect osFoundry to continue"`, "Authentication required"},
		{"token for another resource", otherResource, "list_agents", 401,
			`Bearer error="invalid_token", resource_metadata="` + metadata + `", scope="osfoundry:read osfoundry:write", error_description="Connect osFoundry to continue"`, "Authentication required"},
		{"read-only token on write tool", readOnly.token, "set_status", 403,
			`Bearer error="insufficient_scope", resource_metadata="` + metadata + `", scope="osfoundry:write", error_description="Connect osFoundry to continue"`, "Insufficient scope: this tool needs osfoundry:write"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := e.rpc(c.token, toolCall(7, c.tool, map[string]any{}))
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if got := resp.Header.Values("WWW-Authenticate"); !slices.Equal(got, []string{c.header}) {
				t.Fatalf("WWW-Authenticate\n got %q\nwant %q", got, c.header)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			var b refusalBody
			if err := json.Unmarshal(body, &b); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			if b.JSONRPC != "2.0" || b.ID != 7 || b.Error != nil || b.Result == nil {
				t.Fatalf("want a JSON-RPC result for id 7, got %s", body)
			}
			r := b.Result
			if !r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != c.text {
				t.Fatalf("result %s, want isError with text %q", body, c.text)
			}
			if got := r.Meta["mcp/www_authenticate"]; !slices.Equal(got, []string{c.header}) {
				t.Fatalf("_meta[mcp/www_authenticate] = %q, want [%q]", got, c.header)
			}
		})
	}

	t.Run("valid token passes", func(t *testing.T) {
		resp, body := e.rpc(valid.token, toolCall(1, "list_agents", map[string]any{}), "Mcp-Protocol-Version", "2025-11-25")
		if resp.StatusCode != 200 || resp.Header.Get("WWW-Authenticate") != "" || strings.Contains(string(body), `"isError":true`) {
			t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, body)
		}
	})
	t.Run("newer protocol refusal carries resultType", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"set_status","arguments":{},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		resp, b := e.rpc("", body)
		var rb refusalBody
		if err := json.Unmarshal(b, &rb); err != nil || resp.StatusCode != 401 || rb.Result == nil || rb.Result.ResultType != "complete" {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
	})
}

// TestAnonymousMethods checks that only tools/call needs a token: the exact
// sequence the MCP Inspector CLI sends on connecting answers without one
// (and the same with a valid one), initialize advertises only what is
// implemented, and a method the server does not implement gets JSON-RPC
// -32601, never a 401.
func TestAnonymousMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	valid := e.agent(ws, owner, store.AllScopes)
	for _, token := range []string{"", valid.token} {
		for _, c := range []struct {
			body   string
			status int
			result string // the whole result, when not ""
		}{
			{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"inspector-cli","version":"2.12.0"}}}`, 200, ""},
			{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, ""},
			{`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`, 200, `{}`},
			{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, 200, ""},
			{`{"jsonrpc":"2.0","id":3,"method":"ping"}`, 200, `{}`},
			{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, 202, ""},
			{`{"jsonrpc":"2.0","method":"notifications/something_new"}`, 202, ""},
		} {
			resp, b := e.rpc(token, c.body, "Mcp-Protocol-Version", "2025-11-25")
			var msg struct {
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if c.status == 200 {
				if err := json.Unmarshal(b, &msg); err != nil {
					t.Fatalf("%s: %v %s", c.body, err, b)
				}
			}
			if resp.StatusCode != c.status || resp.Header.Get("WWW-Authenticate") != "" || msg.Error != nil ||
				(c.status == 200 && msg.Result == nil) || (c.result != "" && string(msg.Result) != c.result) {
				t.Errorf("token %v: %s: %d %s", token != "", c.body, resp.StatusCode, b)
			}
			if strings.Contains(c.body, `"initialize"`) && !strings.Contains(string(b), `"capabilities":{"logging":{},"tools":{}}`) {
				t.Errorf("initialize advertises %s, want logging and tools without listChanged", b)
			}
		}
	}

	for _, method := range []string{"resources/list", "resources/templates/list", "prompts/list", "completion/complete", "resources/subscribe", "sampling/createMessage", "foo/bar"} {
		body := `{"jsonrpc":"2.0","id":9,"method":"` + method + `","params":{}}`
		resp, b := e.rpc("", body, "Mcp-Protocol-Version", "2025-11-25")
		want := `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"method not found: \"` + method + `\""}}`
		if resp.StatusCode != 200 || resp.Header.Get("WWW-Authenticate") != "" || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s: %d %s, want 200 %s", method, resp.StatusCode, b, want)
		}
	}
	// Protocol 2026-07-28 answers -32601 with HTTP 404.
	resp, b := e.rpc("", `{"jsonrpc":"2.0","id":9,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if resp.StatusCode != 404 || !strings.Contains(string(b), `"code":-32601`) {
		t.Errorf("new protocol resources/list: %d %s", resp.StatusCode, b)
	}
	// Inside a (pre-2025-06-18) batch the SDK refuses them the same way.
	resp, b = e.rpc("", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]`, "Mcp-Protocol-Version", "2025-03-26")
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"id":1,"result":{}`) || !strings.Contains(string(b), `"id":2,"error":{"code":-32601`) {
		t.Errorf("batch: %d %s", resp.StatusCode, b)
	}

	// The go-sdk client (newest protocol, server/discover) lists tools anonymously.
	cs := connectClient(t, e.mcpURL(), http.DefaultTransport)
	res, err := cs.ListTools(e.ctx, nil)
	if err != nil || len(res.Tools) != 10 {
		t.Fatalf("anonymous ListTools: %v %d", err, len(res.Tools))
	}
}

// TestPresentedBadTokenIsRefusedWhateverTheMethod: a request that presents
// a token that is invalid, expired, revoked or for another resource gets the
// 401 invalid_token challenge, with the isError/_meta refusal for each of its
// requests, whatever the method, so a client re-authenticates instead of
// showing itself connected; without a token the anonymous methods answer.
func TestPresentedBadTokenIsRefusedWhateverTheMethod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	expired := e.agent(ws, owner, store.AllScopes)
	e.sql().ExpireTokens(expired.conn.ID)
	revoked := e.agent(ws, owner, store.AllScopes)
	if err := e.st.RevokeConnection(e.ctx, ws, revoked.conn.ID); err != nil {
		t.Fatal(err)
	}
	other := e.agent(ws, owner, store.AllScopes)
	otherResource, _, err := e.st.MintAccessToken(e.ctx, other.conn.ID, "http://other.example/mcp", store.AllScopes, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	challenge := `Bearer error="invalid_token", resource_metadata="` + e.base + `/.well-known/oauth-protected-resource/mcp", ` +
		`scope="osfoundry:read osfoundry:write", error_description="Connect osFoundry to continue"`
	tokens := []struct{ name, token string }{
		{"bad", "osf_at_garbage"}, {"not bearer", "Basic dXNlcjpwYXNz"}, {"expired", expired.token}, {"revoked", revoked.token}, {"other resource", otherResource},
	}
	methods := []struct {
		name, body string
		anonymous  int   // the status without a token
		ids        []int // the requests a refusal answers
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, 200, []int{1}},
		{"notifications/initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, nil},
		{"tools/list", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 200, []int{2}},
		{"ping", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, 200, []int{3}},
		{"logging/setLevel", `{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"info"}}`, 200, []int{4}},
		{"notifications/cancelled", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, 202, nil},
		{"an ignored notification", `{"jsonrpc":"2.0","method":"notifications/something_new"}`, 202, nil},
		{"an unimplemented method", `{"jsonrpc":"2.0","id":5,"method":"resources/list"}`, 200, []int{5}},
		{"tools/call", toolCall(6, "list_agents", map[string]any{}), 401, []int{6}},
		{"a batch", `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, 200, []int{7, 8}},
	}
	for _, m := range methods {
		t.Run(m.name+", no token", func(t *testing.T) {
			resp, b := e.rpc("", m.body, "Mcp-Protocol-Version", "2025-03-26")
			hdr := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != m.anonymous || strings.Contains(hdr, "invalid_token") || (m.anonymous != 401 && hdr != "") {
				t.Errorf("%d %q %s, want %d", resp.StatusCode, hdr, b, m.anonymous)
			}
		})
		for _, tk := range tokens {
			t.Run(m.name+", "+tk.name+" token", func(t *testing.T) {
				req, _ := http.NewRequest(http.MethodPost, e.mcpURL(), strings.NewReader(m.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
				req.Header.Set("Authorization", tk.token)
				if !strings.HasPrefix(tk.token, "Basic ") {
					req.Header.Set("Authorization", "Bearer "+tk.token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 401 || !slices.Equal(resp.Header.Values("WWW-Authenticate"), []string{challenge}) {
					t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Values("WWW-Authenticate"), b)
				}
				var got []refusalBody
				switch {
				case len(m.ids) == 0:
					if len(b) != 0 {
						t.Fatalf("a refused notification has a body: %s", b)
					}
				case b[0] == '[':
					if err := json.Unmarshal(b, &got); err != nil {
						t.Fatalf("%v: %s", err, b)
					}
				default:
					got = make([]refusalBody, 1)
					if err := json.Unmarshal(b, &got[0]); err != nil {
						t.Fatalf("%v: %s", err, b)
					}
				}
				if len(got) != len(m.ids) {
					t.Fatalf("%d answers, want %d: %s", len(got), len(m.ids), b)
				}
				for i, r := range got {
					if r.ID != m.ids[i] || r.Result == nil || !r.Result.IsError || len(r.Result.Content) != 1 ||
						r.Result.Content[0].Text != "Authentication required" || !slices.Equal(r.Result.Meta["mcp/www_authenticate"], []string{challenge}) {
						t.Errorf("answer %d: %s", i, b)
					}
				}
			})
		}
	}
}

// TestHostAndOrigin checks the front's half of the DNS-rebinding guard, the
// Origin (the app refuses a foreign Host first: handlers'
// TestForeignHostIsMisdirected), and CORS.
func TestHostAndOrigin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	do := func(method, host, origin string) *http.Response {
		req, _ := http.NewRequest(method, e.mcpURL(), strings.NewReader(list))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, c := range []struct {
		name, method, host, origin string
		status                     int
	}{
		{"loopback host", "POST", "", "", 200},
		{"localhost host", "POST", "localhost:1234", "", 200},
		{"foreign origin", "POST", "", "https://evil.example", 403},
		{"public origin", "POST", "", e.base, 200},
		{"loopback origin", "POST", "", "http://localhost:5173", 200},
		{"preflight", "OPTIONS", "", "http://localhost:5173", 204},
	} {
		resp := do(c.method, c.host, c.origin)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.status)
		}
		if c.origin != "" && c.status < 400 {
			if resp.Header.Get("Access-Control-Allow-Origin") != c.origin || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
				t.Errorf("%s: CORS headers %v", c.name, resp.Header)
			}
		}
	}
}

// TestProtectedResourceMetadata checks both RFC 9728 documents.
func TestProtectedResourceMetadata(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(e.base + path)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Resource               string   `json:"resource"`
			AuthorizationServers   []string `json:"authorization_servers"`
			ScopesSupported        []string `json:"scopes_supported"`
			BearerMethodsSupported []string `json:"bearer_methods_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		if m.Resource != e.base+"/mcp" || !slices.Equal(m.AuthorizationServers, []string{e.base}) ||
			!slices.Equal(m.ScopesSupported, []string{"osfoundry:read", "osfoundry:write"}) || !slices.Equal(m.BearerMethodsSupported, []string{"header"}) {
			t.Fatalf("%s: %+v", path, m)
		}
	}
}

// TestPresenceWrittenAtMostEvery30s checks that an authenticated call marks
// the connection seen and a second call right after does not write again.
func TestPresenceWrittenAtMostEvery30s(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	a := e.agent(ws, owner, store.AllScopes)
	seen := func() *time.Time {
		c, err := e.st.GetConnection(e.ctx, ws, a.conn.ID)
		if err != nil {
			t.Fatal(err)
		}
		return c.LastSeenAt
	}
	if seen() != nil {
		t.Fatal("seen before any call")
	}
	a.ok("list_agents", map[string]any{}, nil)
	first := seen()
	if first == nil {
		t.Fatal("not marked seen")
	}
	a.ok("list_agents", map[string]any{}, nil)
	if second := seen(); !second.Equal(*first) {
		t.Fatalf("last_seen_at rewritten within 30 s: %v then %v", first, second)
	}
	// Older than 30 s: the next call writes again.
	e.sql().SetLastSeen(a.conn.ID, store.PresenceWriteInterval+time.Second)
	stale := seen()
	a.ok("list_agents", map[string]any{}, nil)
	if third := seen(); !third.After(*stale) {
		t.Fatalf("last_seen_at not refreshed after 31 s: %v then %v", stale, third)
	}
}

// TestPublicHost: with a public base URL, its Origin is accepted besides
// loopback, and any other is refused.
func TestPublicHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := mcp.New(mcp.Options{Store: e.st, BaseURL: "https://foundry.example"})
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, c := range []struct {
		host, origin string
		status       int
	}{
		{"foundry.example", "", 200},
		{"foundry.example", "https://foundry.example", 200},
		{"foundry.example", "https://evil.example", 403},
		{"127.0.0.1:8080", "", 200},
	} {
		req := httptest.NewRequest(http.MethodPost, "https://"+c.host+"/mcp", strings.NewReader(list))
		req.Host = c.host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.status {
			t.Errorf("Host %s Origin %s: %d, want %d", c.host, c.origin, rec.Code, c.status)
		}
	}
}

// TestDatabaseDownLeaksNothing: when the token cannot be checked, the answer
// is a 500 JSON-RPC error without database detail.
func TestDatabaseDownLeaksNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	a := e.agent(ws, owner, store.AllScopes)
	e.st.Close()
	resp, body := e.rpc(a.token, toolCall(1, "list_agents", map[string]any{}))
	if resp.StatusCode != 500 || !strings.Contains(string(body), `"message":"internal error"`) || strings.Contains(string(body), "pool") {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
}

// TestCaseVariantKeysAreRefused: a body whose params name the tool twice, in
// two cases or twice in one, is refused before any check of the token or the
// scope reads it (HTTP 400, JSON-RPC -32600), so the front cannot decide the
// scope from one name while the SDK calls another.
func TestCaseVariantKeysAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm := e.team("team_session", store.RoleContributor, "reader")
	reader := e.agent(tm.ws, tm.owner, []string{store.ScopeRead}, tm.p)
	reader.invite(tm.s, store.RoleContributor)
	args := `{"session_type":"team_session","session_id":"` + tm.s.PublicID + `","subject":"s","body":"b","idempotency_key":"k"}`
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"post_session_note","Name":"list_agents","arguments":` + args + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"list_agents","name":"post_session_note","arguments":` + args + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"post_session_note","name":"list_agents","arguments":` + args + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","METHOD":"ping","params":{"name":"post_session_note","arguments":` + args + `}}`,
	} {
		resp, b := e.rpc(reader.token, body)
		var msg struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &msg); err != nil || resp.StatusCode != 400 || msg.Error.Code != -32600 ||
			!strings.Contains(msg.Error.Message, "request JSON has the member") {
			t.Errorf("%s:\n%d %s", body, resp.StatusCode, b)
		}
	}
	var notes int
	if err := e.sql().QueryRow(`SELECT count(*) FROM notes`).Scan(&notes); err != nil || notes != 0 {
		t.Errorf("%d notes written (%v)", notes, err)
	}
}
