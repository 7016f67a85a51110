package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestOAuthFlowAcrossReplicas runs registration, sign-in, consent, code
// exchange, refresh and tool calls through a proxy that alternates replicas.
func TestOAuthFlowAcrossReplicas(t *testing.T) {
	t.Parallel()
	rp := startReplicaPair(t, 0, startReplica)
	rp.proxy(t)
	base, w := rp.base, rp.w

	// 1. Dynamic registration.
	reg, _ := json.Marshal(map[string]any{"client_name": "Replica client", "redirect_uris": []string{"http://127.0.0.1/callback"},
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}})
	res, err := http.Post(base+"/register", "application/json", strings.NewReader(string(reg)))
	if err != nil {
		t.Fatal(err)
	}
	var client struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(res.Body).Decode(&client)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || client.ClientID == "" {
		t.Fatalf("register: %d %+v", res.StatusCode, client)
	}

	// 2. The owner signs in (the cookie is signed with the key all replicas share).
	owner := newOwnerBrowser(t, base, w)
	owner.signIn()

	// 3. Authorize and consent, on whichever replicas the proxy picks.
	verifierBytes := make([]byte, 32)
	rand.Read(verifierBytes)
	verifier := base64.RawURLEncoding.EncodeToString(verifierBytes)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {client.ClientID}, "redirect_uri": {"http://127.0.0.1:5555/callback"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {base + "/mcp"}, "scope": {"osfoundry:read osfoundry:write"}, "state": {"xyz"}}
	loc, err := owner.approve(base + "/authorize?" + q.Encode())
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("consent: %v %v", err, loc)
	}
	if loc.Query().Get("state") != "xyz" || loc.Query().Get("iss") != base {
		t.Fatalf("redirect %s: state and iss must come back", loc)
	}

	// 4. Code for tokens, then a refresh.
	tokenReq := func(v url.Values) map[string]any {
		t.Helper()
		res, err := http.PostForm(base+"/token", v)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("token: %d %v", res.StatusCode, out)
		}
		return out
	}
	tok := tokenReq(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {client.ClientID},
		"redirect_uri": {"http://127.0.0.1:5555/callback"}, "code_verifier": {verifier}, "resource": {base + "/mcp"}})
	refreshed := tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {client.ClientID}, "resource": {base + "/mcp"}})
	access := refreshed["access_token"].(string)

	// 5. Tool calls alternate replicas; all act as the one connection.
	if r, err := callTool(base, access, "claim_connected_profile", map[string]any{"handle": "replica-agent", "display_name": "Replica agent"}); err != nil || r.isError || r.status != 200 {
		t.Fatalf("claim: %v %+v", err, r)
	}
	for i := range 6 {
		r, err := callTool(base, access, "set_status", map[string]any{"task": fmt.Sprintf("step %d", i)})
		if err != nil || r.isError || r.status != 200 {
			t.Fatalf("set_status %d: %v %+v", i, err, r)
		}
		if got := fmt.Sprint(r.data["task"]); got != fmt.Sprintf("step %d", i) {
			t.Fatalf("set_status %d answered task %q", i, got)
		}
	}
	for _, rep := range []*replica{rp.a, rp.b} {
		if !strings.Contains(rep.logs.String(), "path=/mcp") || !strings.Contains(rep.logs.String(), "path=/authorize") && !strings.Contains(rep.logs.String(), "path=/token") {
			t.Errorf("replica %s served no OAuth or MCP step:\n%s", rep.URL, rep.logs.String())
		}
	}
}
