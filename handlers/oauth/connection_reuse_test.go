package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
)

// signInAgain is a client that registers itself anew on every sign-in (as
// the go-sdk client does): it registers name with redirect, then runs the
// consent and code exchange, granting scopes. It returns the client id and
// the token response.
func (e *env) signInAgain(name, redirect string, scopes []string) (string, map[string]any) {
	e.t.Helper()
	resp, out := e.jsonPost("/register", map[string]any{
		"client_name": name, "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
	})
	if resp.StatusCode != http.StatusCreated {
		e.t.Fatalf("register: %d %v", resp.StatusCode, out)
	}
	clientID := out["client_id"].(string)
	verifier, challenge := pkce(clientID[len(clientID)-4:])
	_, d := e.consent(e.authParams(clientID, redirect, challenge))
	loc := e.decide(d, "approve", scopes, nil)
	resp, tok := e.exchange(clientID, loc.Query().Get("code"), verifier, redirect)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("exchange: %d %v", resp.StatusCode, tok)
	}
	return clientID, tok
}

// TestNewRegistrationOfTheSameClientContinuesItsConnection: a client that
// registers again to step up from read to write (same name, same redirect
// URIs) continues the owner's connection: one row on the Connections page,
// the same agent profile and sender slug. The earlier registration's refresh
// token still works for it, and revoking it does not end the connection. A
// client with another name or other redirect URIs gets its own connection.
func TestNewRegistrationOfTheSameClientContinuesItsConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signIn()
	m := e.mcpEndpoint()
	const name, redirect = "Go SDK agent", "http://localhost:3142/callback"

	first, tok1 := e.signInAgain(name, redirect, []string{store.ScopeRead})
	if status, _, _ := m.call(tok1["access_token"].(string), "claim_connected_profile", map[string]any{"handle": "go-agent", "display_name": "Go agent"}); status != http.StatusForbidden {
		t.Fatalf("read-only claim: %d, want 403 insufficient_scope", status)
	}
	second, tok2 := e.signInAgain(name, redirect, []string{store.ScopeRead, store.ScopeWrite})
	if first == second {
		t.Fatal("the client did not register again")
	}
	_, _, res := m.call(tok2["access_token"].(string), "claim_connected_profile", map[string]any{"handle": "go-agent", "display_name": "Go agent"})
	slug, _ := res["structuredContent"].(map[string]any)["sender_slug"].(string)
	if res["isError"] == true || !strings.HasPrefix(slug, "ext-") {
		t.Fatalf("claim after step-up: %v", res)
	}
	ti1, ok1 := e.verify(tok1["access_token"].(string))
	ti2, ok2 := e.verify(tok2["access_token"].(string))
	if !ok1 || !ok2 || ti1.ConnectionID != ti2.ConnectionID {
		t.Fatalf("two connections: %+v %+v", ti1, ti2)
	}

	// A third sign-in (a restart of the agent) keeps the profile and slug.
	_, tok3 := e.signInAgain(name, redirect, []string{store.ScopeRead, store.ScopeWrite})
	_, _, res = m.call(tok3["access_token"].(string), "claim_connected_profile", map[string]any{"handle": "go-agent", "display_name": "Go agent"})
	if again, _ := res["structuredContent"].(map[string]any)["sender_slug"].(string); again != slug {
		t.Fatalf("sender slug changed from %s to %s: %v", slug, again, res)
	}

	// Another client name, or other redirect URIs: a connection of its own.
	_, other := e.signInAgain("Another agent", redirect, []string{store.ScopeRead})
	_, moved := e.signInAgain(name, "http://localhost:3142/other", []string{store.ScopeRead})
	for _, tok := range []map[string]any{other, moved} {
		if ti, _ := e.verify(tok["access_token"].(string)); ti == nil || ti.ConnectionID == ti1.ConnectionID {
			t.Fatalf("a different client continued the connection: %+v", ti)
		}
	}

	// The Connections page: the continued connection with its profile, the
	// other agent, and the client with other redirect URIs.
	_, d := e.doc("/connections")
	var rows []string
	d.Find(`[data-testid="connection"]`).Each(func(_ int, s *goquery.Selection) {
		rows = append(rows, s.Find(`[data-testid="connection-client"]`).Text()+" / "+s.Find(`[data-testid="connection-handle"]`).Text())
	})
	if len(rows) != 3 || strings.Count(strings.Join(rows, "\n"), "go-agent") != 1 {
		t.Fatalf("Connections page rows %q, want 3, one of them the continued connection of go-agent", rows)
	}

	// The earlier registration still refreshes its own token, and revoking
	// that token does not end the connection its successor now holds.
	resp, out := e.refresh(first, tok1["refresh_token"].(string))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("refresh by the earlier registration: %d %v", resp.StatusCode, out)
	}
	resp, _ = e.formPost("/revoke", url.Values{"token": {out["refresh_token"].(string)}, "client_id": {first}}, "", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if _, ok := e.verify(tok3["access_token"].(string)); !ok {
		t.Fatal("revoking the earlier registration's token ended the continued connection")
	}
	if resp, _ := e.refresh(first, out["refresh_token"].(string)); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("revoked refresh token still refreshes: %d", resp.StatusCode)
	}
	if c := e.connection(ti1.ConnectionID); c.RevokedAt != nil {
		t.Fatal("connection revoked")
	}
}
