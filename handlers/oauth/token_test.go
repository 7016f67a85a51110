package oauth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/osfoundry/osfoundry/handlers/oauth"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestGolangOAuth2Client runs the whole flow with golang.org/x/oauth2 as the client.
func TestGolangOAuth2Client(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signIn()
	clientID := e.registerPublic("http://127.0.0.1/callback")
	cfg := &oauth2.Config{
		ClientID:    clientID,
		Endpoint:    oauth2.Endpoint{AuthURL: e.base + "/authorize", TokenURL: e.base + "/token", AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: "http://127.0.0.1:38111/callback",
		Scopes:      []string{"osfoundry:read", "osfoundry:write"},
	}
	verifier := oauth2.GenerateVerifier()
	resource := oauth2.SetAuthURLParam("resource", e.resource()+"/")
	authURL := cfg.AuthCodeURL("xyz", oauth2.S256ChallengeOption(verifier), resource)
	u, _ := url.Parse(authURL)
	code := e.approve(u.Query())
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, e.api)
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier), resource)
	if err != nil {
		t.Fatal(err)
	}
	if tok.TokenType != "Bearer" || tok.RefreshToken == "" || time.Until(tok.Expiry) < 50*time.Minute {
		t.Fatalf("token %+v", tok)
	}
	ti, ok := e.verify(tok.AccessToken)
	if !ok || !slices.Equal(ti.Scopes, store.AllScopes) || ti.WorkspaceID != e.owner.WorkspaceID {
		t.Fatalf("verify: %v %+v", ok, ti)
	}
	// The oauth2 package refreshes an expired token through the same endpoint.
	tok.Expiry = time.Now().Add(-time.Minute)
	fresh, err := cfg.TokenSource(ctx, tok).Token()
	if err != nil {
		t.Fatal(err)
	}
	if fresh.AccessToken == tok.AccessToken || fresh.RefreshToken == tok.RefreshToken {
		t.Fatal("refresh did not rotate")
	}
	if _, ok := e.verify(fresh.AccessToken); !ok {
		t.Fatal("refreshed access token not accepted")
	}
}

func TestCodeExchangeRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signIn()
	redirect := "http://127.0.0.1:4000/cb"
	clientID := e.registerPublic("http://127.0.0.1/cb")
	other := e.registerPublic("http://127.0.0.1/cb")
	verifier, challenge := pkce("c")
	newCode := func() string { return e.approve(e.authParams(clientID, redirect, challenge)) }
	base := func(code string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
			"redirect_uri": {redirect}, "client_id": {clientID}, "resource": {e.resource()}}
	}
	for _, tc := range []struct {
		name, code string
		status     int
		change     func(url.Values)
	}{
		{"wrong verifier", "invalid_grant", 400, func(f url.Values) { f.Set("code_verifier", strings.Repeat("z", 64)) }},
		{"missing verifier", "invalid_request", 400, func(f url.Values) { f.Del("code_verifier") }},
		{"other redirect port", "invalid_grant", 400, func(f url.Values) { f.Set("redirect_uri", "http://127.0.0.1:4001/cb") }},
		{"missing redirect", "invalid_request", 400, func(f url.Values) { f.Del("redirect_uri") }},
		{"foreign resource", "invalid_target", 400, func(f url.Values) { f.Set("resource", "https://other.example/mcp") }},
		{"other client", "invalid_grant", 400, func(f url.Values) { f.Set("client_id", other) }},
		{"unknown client", "invalid_client", 401, func(f url.Values) { f.Set("client_id", "nobody") }},
		{"unknown code", "invalid_grant", 400, func(f url.Values) { f.Set("code", "osf_ac_nope") }},
		{"unsupported grant", "unsupported_grant_type", 400, func(f url.Values) { f.Set("grant_type", "password") }},
		{"repeated parameter", "invalid_request", 400, func(f url.Values) { f.Add("code", "again") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := base(newCode())
			tc.change(f)
			resp, out := e.formPost("/token", f, "", "")
			if resp.StatusCode != tc.status || out["error"] != tc.code {
				t.Fatalf("got %d %v, want %d %s", resp.StatusCode, out, tc.status, tc.code)
			}
			if resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatal("error response may be cached")
			}
		})
	}
	t.Run("expired code", func(t *testing.T) {
		code := newCode()
		e.clock.Advance(oauth.CodeTTL + time.Second)
		resp, out := e.formPost("/token", base(code), "", "")
		if resp.StatusCode != 400 || out["error"] != "invalid_grant" || !strings.Contains(out["error_description"].(string), "expired") {
			t.Fatalf("got %d %v", resp.StatusCode, out)
		}
	})
	t.Run("reused code revokes the connection", func(t *testing.T) {
		code := newCode()
		resp, tok := e.formPost("/token", base(code), "", "")
		if resp.StatusCode != 200 {
			t.Fatalf("first exchange: %d %v", resp.StatusCode, tok)
		}
		ti, ok := e.verify(tok["access_token"].(string))
		if !ok {
			t.Fatal("token not accepted")
		}
		resp, out := e.formPost("/token", base(code), "", "")
		if resp.StatusCode != 400 || out["error"] != "invalid_grant" {
			t.Fatalf("second exchange: %d %v", resp.StatusCode, out)
		}
		if _, ok := e.verify(tok["access_token"].(string)); ok {
			t.Fatal("access token still accepted after code reuse")
		}
		if e.connection(ti.ConnectionID).RevokedAt == nil {
			t.Fatal("connection not revoked")
		}
		resp, out = e.refresh(clientID, tok["refresh_token"].(string))
		if resp.StatusCode != 400 || out["error"] != "invalid_grant" {
			t.Fatalf("refresh after revocation: %d %v", resp.StatusCode, out)
		}
	})
}

func TestRefreshRotationAndGrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clientID, first := e.fullGrant()
	rt1 := first["refresh_token"].(string)

	resp, second := e.refresh(clientID, rt1)
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("refresh: %d %v", resp.StatusCode, second)
	}
	if second["refresh_token"] == rt1 || second["access_token"] == first["access_token"] {
		t.Fatal("refresh did not rotate")
	}
	// A parallel client with the same old token, inside the grace window: the same new pair.
	e.clock.Advance(oauth.RefreshGrace - 5*time.Second)
	resp, again := e.refresh(clientID, rt1)
	if resp.StatusCode != 200 || again["access_token"] != second["access_token"] || again["refresh_token"] != second["refresh_token"] {
		t.Fatalf("grace refresh: %d %v, want the same pair as %v", resp.StatusCode, again, second)
	}
	ti, ok := e.verify(second["access_token"].(string))
	if !ok {
		t.Fatal("new access token not accepted")
	}
	// The successor rotates normally.
	resp, third := e.refresh(clientID, second["refresh_token"].(string))
	if resp.StatusCode != 200 || third["refresh_token"] == second["refresh_token"] {
		t.Fatalf("second rotation: %d %v", resp.StatusCode, third)
	}
	// Other clients cannot use it.
	other := e.registerPublic("http://127.0.0.1/cb")
	if resp, out := e.refresh(other, third["refresh_token"].(string)); resp.StatusCode != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("other client: %d %v", resp.StatusCode, out)
	}
	// After the grace window the old token is a replay: the grant is revoked.
	e.clock.Advance(10 * time.Second)
	resp, out := e.refresh(clientID, rt1)
	if resp.StatusCode != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("reuse after grace: %d %v", resp.StatusCode, out)
	}
	if e.connection(ti.ConnectionID).RevokedAt == nil {
		t.Fatal("connection not revoked after reuse")
	}
	if _, ok := e.verify(third["access_token"].(string)); ok {
		t.Fatal("tokens survive a replay")
	}
	if resp, out := e.refresh(clientID, third["refresh_token"].(string)); resp.StatusCode != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("newest refresh token after revocation: %d %v", resp.StatusCode, out)
	}
}

func TestRevokedConnectionIsInvalidGrant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clientID, tok := e.fullGrant()
	ti, _ := e.verify(tok["access_token"].(string))
	if err := e.st.RevokeConnection(context.Background(), e.owner.WorkspaceID, ti.ConnectionID); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.verify(tok["access_token"].(string)); ok {
		t.Fatal("access token accepted after revocation")
	}
	resp, out := e.refresh(clientID, tok["refresh_token"].(string))
	if resp.StatusCode != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("got %d %v", resp.StatusCode, out)
	}
}

func TestPartialApprovalAndReuse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signIn()
	ctx := context.Background()
	p1, _ := e.st.CreateProject(ctx, e.owner.WorkspaceID, "Alpha")
	p2, _ := e.st.CreateProject(ctx, e.owner.WorkspaceID, "Beta")
	clientID := e.registerPublic("http://127.0.0.1/cb")
	redirect := "http://127.0.0.1:5000/cb"
	verifier, challenge := pkce("p")
	_, d := e.consent(e.authParams(clientID, redirect, challenge))
	if d.Find(`[data-testid="consent-unverified"]`).Length() != 1 || d.Find(`[data-testid="consent-redirect-host"]`).Text() != "127.0.0.1:5000" {
		t.Fatal("consent page lacks the unverified mark or redirect host")
	}
	if n := d.Find(`[data-testid="consent-project"]`).Length(); n != 2 {
		t.Fatalf("%d projects offered", n)
	}
	// Write unticked: only read is granted; seated in Alpha.
	loc := e.decide(d, "approve", []string{store.ScopeRead}, []string{fmt.Sprint(p1.ID)})
	resp, tok := e.exchange(clientID, loc.Query().Get("code"), verifier, redirect)
	if resp.StatusCode != 200 || tok["scope"] != store.ScopeRead {
		t.Fatalf("exchange: %d %v", resp.StatusCode, tok)
	}
	ti, ok := e.verify(tok["access_token"].(string))
	if !ok || ti.HasScope(store.ScopeWrite) {
		t.Fatalf("token scopes %+v", ti)
	}
	// Approving the same client again reuses the connection (the agent keeps its identity).
	_, d = e.consent(e.authParams(clientID, redirect, challenge))
	loc = e.decide(d, "approve", []string{store.ScopeRead, store.ScopeWrite}, []string{fmt.Sprint(p2.ID)})
	_, tok2 := e.exchange(clientID, loc.Query().Get("code"), verifier, redirect)
	ti2, ok := e.verify(tok2["access_token"].(string))
	if !ok || ti2.ConnectionID != ti.ConnectionID || !ti2.HasScope(store.ScopeWrite) {
		t.Fatalf("second grant %+v, first connection %d", ti2, ti.ConnectionID)
	}
	conns, _ := e.st.ListConnections(ctx, e.owner.WorkspaceID)
	if len(conns) != 1 || !slices.Equal(conns[0].Projects, []string{"Alpha", "Beta"}) {
		t.Fatalf("connections %+v", conns)
	}
	// A client asking for write alone (as MCP SDKs do after a refused write
	// call) is offered read too, so its read calls work.
	q := e.authParams(clientID, redirect, challenge)
	q.Set("scope", store.ScopeWrite)
	_, d = e.consent(q)
	if d.Find(`[data-testid="consent-scope-Read"]`).Length() != 1 || d.Find(`[data-testid="consent-scope-Write"] input`).Length() != 1 {
		t.Fatal("write-only request does not offer read and write")
	}
	loc = e.decide(d, "approve", []string{store.ScopeRead, store.ScopeWrite}, nil)
	if _, tok3 := e.exchange(clientID, loc.Query().Get("code"), verifier, redirect); tok3["scope"] != "osfoundry:read osfoundry:write" {
		t.Fatalf("write-only request granted %v", tok3["scope"])
	}
	// No scope ticked re-renders the page with a message.
	_, d = e.consent(e.authParams(clientID, "http://127.0.0.1:5000/cb", challenge))
	d.Find(`input[name="grant"][type="checkbox"]`).Remove()
	d.Find(`input[name="grant"]`).Remove()
	r := e.submitConsent(d, "approve", nil, nil)
	if r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("approve with nothing granted: %d", r.StatusCode)
	}
}

func TestConfidentialClientAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signIn()
	resp, reg := e.jsonPost("/register", map[string]any{"client_name": "Server app", "redirect_uris": []string{"https://app.example.com/cb"}})
	if resp.StatusCode != 201 {
		t.Fatal(reg)
	}
	id, secret := reg["client_id"].(string), reg["client_secret"].(string)
	verifier, challenge := pkce("k")
	exchange := func(f url.Values, user, pass string) (*http.Response, map[string]any) {
		code := e.approve(e.authParams(id, "https://app.example.com/cb", challenge))
		f.Set("grant_type", "authorization_code")
		f.Set("code", code)
		f.Set("code_verifier", verifier)
		f.Set("redirect_uri", "https://app.example.com/cb")
		return e.formPost("/token", f, user, pass)
	}
	if resp, out := exchange(url.Values{}, id, secret); resp.StatusCode != 200 {
		t.Fatalf("basic: %d %v", resp.StatusCode, out)
	}
	if resp, out := exchange(url.Values{"client_id": {id}, "client_secret": {secret}}, "", ""); resp.StatusCode != 200 {
		t.Fatalf("post: %d %v", resp.StatusCode, out)
	}
	resp, out := exchange(url.Values{}, id, "wrong")
	if resp.StatusCode != 401 || out["error"] != "invalid_client" || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("wrong secret: %d %v", resp.StatusCode, out)
	}
	if resp, out := exchange(url.Values{"client_id": {id}}, "", ""); resp.StatusCode != 401 || out["error"] != "invalid_client" {
		t.Fatalf("no secret: %d %v", resp.StatusCode, out)
	}
}

// TestParallelRefreshesShareOnePair: clients whose sessions share one refresh
// token race to refresh it; every one of them gets the same new pair.
func TestParallelRefreshesShareOnePair(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clientID, tok := e.fullGrant()
	rt := tok["refresh_token"].(string)
	const n = 6
	results := make(chan map[string]any, n)
	for i := 0; i < n; i++ {
		go func() {
			_, out := e.refresh(clientID, rt)
			results <- out
		}()
	}
	var first map[string]any
	for i := 0; i < n; i++ {
		out := <-results
		if out["access_token"] == nil {
			t.Fatalf("a parallel refresh failed: %v", out)
		}
		if first == nil {
			first = out
		} else if out["access_token"] != first["access_token"] || out["refresh_token"] != first["refresh_token"] {
			t.Fatalf("parallel refreshes got different pairs: %v %v", first, out)
		}
	}
	if _, ok := e.verify(first["access_token"].(string)); !ok {
		t.Fatal("shared access token not accepted")
	}
}

func TestPublicClientMayUseBasicWithoutSecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clientID, tok := e.fullGrant()
	f := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}}
	if resp, out := e.formPost("/token", f, clientID, ""); resp.StatusCode != 200 {
		t.Fatalf("basic with empty password: %d %v", resp.StatusCode, out)
	}
	if resp, out := e.formPost("/token", f, clientID, "guess"); resp.StatusCode != 401 || out["error"] != "invalid_client" {
		t.Fatalf("public client with a secret: %d %v", resp.StatusCode, out)
	}
}

func TestExpiredTokensArePurgedOnIssue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clientID, tok := e.fullGrant()
	count := func() int {
		var n int
		if err := storetest.SQL(t, e.st).QueryRow(`SELECT count(*) FROM access_tokens WHERE token_hash = $1`, store.HashToken(tok["access_token"].(string))).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count() != 1 {
		t.Fatal("access token not stored")
	}
	e.clock.Advance(store.AccessTokenTTL + time.Minute)
	if resp, out := e.refresh(clientID, tok["refresh_token"].(string)); resp.StatusCode != 200 {
		t.Fatalf("refresh: %d %v", resp.StatusCode, out)
	}
	if count() != 0 {
		t.Fatal("expired access token kept")
	}
}
