package oauth_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// mcpCaller calls tools on the app's /mcp with raw JSON-RPC, as a client
// holding an OAuth token would.
type mcpCaller struct {
	t   *testing.T
	url string
}

func (e *env) mcpEndpoint() *mcpCaller { return &mcpCaller{t: e.t, url: e.resource()} }

// call posts tools/call and returns the HTTP status, WWW-Authenticate and the JSON-RPC result.
func (m *mcpCaller) call(token, tool string, args map[string]any) (int, string, map[string]any) {
	m.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, m.url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	if i := strings.Index(text, "data:"); i >= 0 && !strings.HasPrefix(text, "{") {
		text = strings.TrimSpace(strings.SplitN(text[i+5:], "\n", 2)[0])
	}
	var msg struct {
		Result map[string]any `json:"result"`
	}
	_ = json.Unmarshal([]byte(text), &msg)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), msg.Result
}

func TestOAuthTokensOnTheMCPEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.mcpEndpoint()
	clientID, tok := e.fullGrant()
	at := tok["access_token"].(string)

	status, _, res := m.call(at, "claim_connected_profile", map[string]any{"handle": "oauth-agent", "display_name": "OAuth agent"})
	if status != 200 || res["isError"] == true {
		t.Fatalf("claim with an OAuth token: %d %v", status, res)
	}
	if status, _, res := m.call(at, "set_status", map[string]any{"task": "testing"}); status != 200 || res["isError"] == true {
		t.Fatalf("set_status: %d %v", status, res)
	}

	t.Run("read-only approval is refused write tools", func(t *testing.T) {
		redirect := "http://127.0.0.1:7000/callback"
		verifier, challenge := pkce("r")
		_, d := e.consent(e.authParams(clientID, redirect, challenge))
		// A second approval of the same client reuses its connection; narrow it to read.
		loc := e.decide(d, "approve", []string{store.ScopeRead}, nil)
		_, ro := e.exchange(clientID, loc.Query().Get("code"), verifier, redirect)
		status, hdr, _ := m.call(ro["access_token"].(string), "set_status", map[string]any{"task": "x"})
		if status != http.StatusForbidden || !strings.Contains(hdr, `error="insufficient_scope"`) {
			t.Fatalf("write tool with a read-only token: %d %q", status, hdr)
		}
		if status, _, res := m.call(ro["access_token"].(string), "list_agents", map[string]any{}); status != 200 || res["isError"] == true {
			t.Fatalf("read tool with a read-only token: %d %v", status, res)
		}
		// The token issued before write was withheld lost it too.
		if status, _, _ := m.call(at, "set_status", map[string]any{"task": "x"}); status != http.StatusForbidden {
			t.Fatalf("write tool with the earlier token after write was withheld: %d", status)
		}
	})

	t.Run("revoked connection gets 401 and invalid_grant", func(t *testing.T) {
		ti, ok := e.verify(at)
		if !ok {
			t.Fatal("token not valid before revocation")
		}
		if err := e.st.RevokeConnection(t.Context(), e.owner.WorkspaceID, ti.ConnectionID); err != nil {
			t.Fatal(err)
		}
		status, hdr, _ := m.call(at, "list_agents", map[string]any{})
		if status != http.StatusUnauthorized || !strings.Contains(hdr, `error="invalid_token"`) {
			t.Fatalf("revoked token on /mcp: %d %q", status, hdr)
		}
		if resp, out := e.refresh(clientID, tok["refresh_token"].(string)); resp.StatusCode != 400 || out["error"] != "invalid_grant" {
			t.Fatal(fmt.Sprint(resp.StatusCode, out))
		}
	})
}

// TestIssuerMatchesProtectedResourceMetadata: clients compare the issuer of
// the authorization server with the one the resource names, character for character.
func TestIssuerMatchesProtectedResourceMetadata(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.mcpEndpoint()
	get := func(url string) map[string]any {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	prm := get(strings.TrimSuffix(m.url, "/mcp") + "/.well-known/oauth-protected-resource/mcp")
	if prm2 := get(e.base + "/.well-known/oauth-protected-resource"); !reflect.DeepEqual(prm, prm2) {
		t.Fatalf("the two protected resource documents differ: %v %v", prm, prm2)
	}
	as := get(e.base + "/.well-known/oauth-authorization-server")
	servers, _ := prm["authorization_servers"].([]any)
	if len(servers) != 1 || servers[0] != as["issuer"] || prm["resource"] != e.resource() {
		t.Fatalf("protected resource %v, authorization server issuer %v", prm, as["issuer"])
	}
}
