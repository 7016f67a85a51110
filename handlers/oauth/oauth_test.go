package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/osfoundry/osfoundry/handlers/oauth"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestMetadataDocumentsAgree(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var docs []map[string]any
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		resp, err := e.api.Get(e.base + p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s: status %d, CORS %q", p, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
		docs = append(docs, m)
	}
	if !reflect.DeepEqual(docs[0], docs[1]) {
		t.Fatalf("documents differ:\n%v\n%v", docs[0], docs[1])
	}
	m := docs[0]
	want := map[string]any{
		"issuer":                                e.base,
		"authorization_endpoint":                e.base + "/authorize",
		"token_endpoint":                        e.base + "/token",
		"registration_endpoint":                 e.base + "/register",
		"revocation_endpoint":                   e.base + "/revoke",
		"response_types_supported":              []any{"code"},
		"grant_types_supported":                 []any{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []any{"S256"},
		"token_endpoint_auth_methods_supported": []any{"none", "client_secret_basic", "client_secret_post"},
		"scopes_supported":                      []any{"osfoundry:read", "osfoundry:write"},
		"client_id_metadata_document_supported": true,
	}
	for k, v := range want {
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if strings.HasSuffix(m["issuer"].(string), "/") {
		t.Error("issuer has a trailing slash")
	}
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/register", "/token", "/revoke"} {
		req, _ := http.NewRequest(http.MethodOptions, e.base+p, nil)
		req.Header.Set("Origin", "http://localhost:6274")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := e.api.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
			t.Errorf("preflight %s: %d %v", p, resp.StatusCode, resp.Header)
		}
	}
}

func TestRegister(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	t.Run("public client with mixed redirect URIs gets no secret", func(t *testing.T) {
		uris := []string{"cursor://anysphere.cursor-retrieval/oauth/user-osfoundry/callback", "https://app.example.com/cb", "http://localhost/callback", "http://[::1]/cb"}
		resp, out := e.jsonPost("/register", map[string]any{"client_name": "Cursor", "redirect_uris": uris, "token_endpoint_auth_method": "none"})
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("status %d %v", resp.StatusCode, out)
		}
		if _, ok := out["client_secret"]; ok {
			t.Fatal("public client got a secret")
		}
		if out["token_endpoint_auth_method"] != "none" || len(out["redirect_uris"].([]any)) != 4 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("response %v %v", out, resp.Header)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatal("no CORS on /register")
		}
	})
	t.Run("confidential client gets a secret stored hashed", func(t *testing.T) {
		resp, out := e.jsonPost("/register", map[string]any{"client_name": "Server app", "redirect_uris": []string{"https://app.example.com/cb"}})
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("status %d %v", resp.StatusCode, out)
		}
		secret, _ := out["client_secret"].(string)
		if secret == "" || out["token_endpoint_auth_method"] != "client_secret_basic" {
			t.Fatalf("response %v", out)
		}
		cl, err := e.st.GetOAuthClient(context.Background(), out["client_id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(cl.SecretHash), secret) || !cl.CheckSecret(secret) || cl.CheckSecret(secret+"x") {
			t.Fatal("secret not stored as a hash")
		}
	})
	for _, tc := range []struct {
		name, code, field string
		body              any
	}{
		{"no redirect URIs", "invalid_redirect_uri", "redirect_uris", map[string]any{"client_name": "x"}},
		{"javascript redirect", "invalid_redirect_uri", "redirect_uris[1]", map[string]any{"redirect_uris": []string{"https://ok.example/cb", "javascript:alert(1)"}}},
		{"http on a public host", "invalid_redirect_uri", "redirect_uris[0]", map[string]any{"redirect_uris": []string{"http://evil.example/cb"}}},
		{"fragment", "invalid_redirect_uri", "redirect_uris[0]", map[string]any{"redirect_uris": []string{"https://ok.example/cb#x"}}},
		{"unknown auth method", "invalid_client_metadata", "token_endpoint_auth_method", map[string]any{"redirect_uris": []string{"https://ok.example/cb"}, "token_endpoint_auth_method": "private_key_jwt"}},
		{"implicit grant", "invalid_client_metadata", "grant_types", map[string]any{"redirect_uris": []string{"https://ok.example/cb"}, "grant_types": []string{"implicit"}}},
		{"token response type", "invalid_client_metadata", "response_types", map[string]any{"redirect_uris": []string{"https://ok.example/cb"}, "response_types": []string{"token"}}},
		{"wrong JSON type", "invalid_client_metadata", "redirect_uris", map[string]any{"redirect_uris": "https://ok.example/cb"}},
		{"name too long", "invalid_client_metadata", "client_name", map[string]any{"redirect_uris": []string{"https://ok.example/cb"}, "client_name": strings.Repeat("n", 201)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, out := e.jsonPost("/register", tc.body)
			if resp.StatusCode != http.StatusBadRequest || out["error"] != tc.code || !strings.Contains(fmt.Sprint(out["error_description"]), tc.field) {
				t.Fatalf("got %d %v, want %s naming %s", resp.StatusCode, out, tc.code, tc.field)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		resp, out := e.jsonPost("/register", map[string]any{"redirect_uris": []string{"https://ok.example/cb"}, "software_id": strings.Repeat("x", 70<<10)})
		if resp.StatusCode != http.StatusRequestEntityTooLarge || out["error"] != "invalid_client_metadata" {
			t.Fatalf("got %d %v", resp.StatusCode, out)
		}
	})
}

func TestAuthorizeRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signIn()
	clientID := e.registerPublic("http://localhost/callback", "https://app.example.com/cb", "cursor://cursor/cb")
	_, challenge := pkce("a")
	good := func() url.Values { return e.authParams(clientID, "https://app.example.com/cb", challenge) }
	type change struct {
		name   string
		change func(url.Values)
	}
	// pages checks that each change of good() is answered with a page of
	// status that has the data-testid hook.
	pages := func(t *testing.T, changes []change, status int, hook string) {
		for _, tc := range changes {
			t.Run(tc.name, func(t *testing.T) {
				q := good()
				tc.change(q)
				resp, d := e.consent(q)
				if resp.StatusCode != status || d.Find(`[data-testid="`+hook+`"]`).Length() != 1 {
					t.Fatalf("status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
				}
			})
		}
	}

	t.Run("shown as a page", func(t *testing.T) {
		pages(t, []change{
			{"unknown client", func(q url.Values) { q.Set("client_id", "nope") }},
			{"missing client", func(q url.Values) { q.Del("client_id") }},
			{"unregistered redirect", func(q url.Values) { q.Set("redirect_uri", "https://evil.example/cb") }},
			{"non-loopback port change", func(q url.Values) { q.Set("redirect_uri", "https://app.example.com:8443/cb") }},
			{"loopback path change", func(q url.Values) { q.Set("redirect_uri", "http://localhost:5000/other") }},
			{"missing redirect", func(q url.Values) { q.Del("redirect_uri") }},
		}, http.StatusBadRequest, "authorize-error")
	})
	t.Run("sent back to the client", func(t *testing.T) {
		for _, tc := range []struct {
			name, code string
			change     func(url.Values)
		}{
			{"plain PKCE", "invalid_request", func(q url.Values) { q.Set("code_challenge_method", "plain") }},
			{"no PKCE method", "invalid_request", func(q url.Values) { q.Del("code_challenge_method") }},
			{"no challenge", "invalid_request", func(q url.Values) { q.Del("code_challenge") }},
			{"missing resource", "invalid_target", func(q url.Values) { q.Del("resource") }},
			{"foreign resource", "invalid_target", func(q url.Values) { q.Set("resource", "https://other.example/mcp") }},
			{"origin as resource", "invalid_target", func(q url.Values) { q.Set("resource", e.base) }},
			{"token response type", "unsupported_response_type", func(q url.Values) { q.Set("response_type", "token") }},
			{"unknown scope", "invalid_scope", func(q url.Values) { q.Set("scope", "osfoundry:admin") }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				q := good()
				tc.change(q)
				resp, _ := e.consent(q)
				loc, _ := url.Parse(resp.Header.Get("Location"))
				if resp.StatusCode != http.StatusFound || loc == nil || loc.Host != "app.example.com" {
					t.Fatalf("status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
				}
				if got := loc.Query(); got.Get("error") != tc.code || got.Get("state") != "st-123" || got.Get("iss") != e.base {
					t.Fatalf("redirect query %v, want error=%s with state and iss", got, tc.code)
				}
			})
		}
	})
	t.Run("accepted", func(t *testing.T) {
		pages(t, []change{
			{"loopback with another port", func(q url.Values) { q.Set("redirect_uri", "http://localhost:53682/callback") }},
			{"custom scheme", func(q url.Values) { q.Set("redirect_uri", "cursor://cursor/cb") }},
			{"resource with trailing slash", func(q url.Values) { q.Set("resource", e.resource()+"/") }},
			{"offline_access tolerated", func(q url.Values) { q.Set("scope", "osfoundry:read offline_access") }},
			{"no scope means both", func(q url.Values) { q.Del("scope") }},
		}, http.StatusOK, "consent")
	})
	t.Run("deny", func(t *testing.T) {
		_, d := e.consent(good())
		loc := e.decide(d, "deny", nil, nil)
		if q := loc.Query(); q.Get("error") != "access_denied" || q.Get("state") != "st-123" || q.Get("iss") != e.base || q.Get("code") != "" {
			t.Fatalf("deny redirect %s", loc)
		}
	})
}

func TestSignedOutOwnerSignsInAndComesBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clientID := e.registerPublic("http://127.0.0.1/cb")
	_, challenge := pkce("s")
	q := e.authParams(clientID, "http://127.0.0.1:9999/cb", challenge)
	resp, _ := e.consent(q)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/login?next=") {
		t.Fatalf("status %d Location %q", resp.StatusCode, loc)
	}
	next, _ := url.Parse(loc)
	_, d := e.doc(loc)
	r, err := e.browser.PostForm(e.base+"/login", url.Values{"_csrf": {csrfOf(d)}, "email": {e.owner.Email}, "password": {ownerPassword}, "next": {next.Query().Get("next")}})
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	back := r.Header.Get("Location")
	if back != "/authorize?"+q.Encode() {
		t.Fatalf("after sign-in went to %q", back)
	}
	resp, doc := e.doc(back)
	if resp.StatusCode != 200 || doc.Find(`[data-testid="consent-client-name"]`).Text() != "Test Agent" {
		t.Fatalf("consent after sign-in: %d", resp.StatusCode)
	}
}

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

func TestRevokeEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clientID, tok := e.fullGrant()
	at, rt := tok["access_token"].(string), tok["refresh_token"].(string)
	ti, _ := e.verify(at)
	revoke := func(token string) {
		t.Helper()
		resp, _ := e.formPost("/revoke", url.Values{"token": {token}, "client_id": {clientID}}, "", "")
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("revoke: %d", resp.StatusCode)
		}
	}
	revoke("osf_at_unknown")
	revoke(at)
	if _, ok := e.verify(at); ok {
		t.Fatal("revoked access token accepted")
	}
	if e.connection(ti.ConnectionID).RevokedAt != nil {
		t.Fatal("revoking an access token ended the grant")
	}
	revoke(rt)
	if e.connection(ti.ConnectionID).RevokedAt == nil {
		t.Fatal("revoking the refresh token did not end the grant")
	}
	if resp, out := e.formPost("/revoke", url.Values{"token": {rt}, "client_id": {"nobody"}}, "", ""); resp.StatusCode != 401 || out["error"] != "invalid_client" {
		t.Fatalf("unknown client: %d %v", resp.StatusCode, out)
	}
}

func TestClientIDMetadataDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signIn()
	var docURL string
	doc := func(m map[string]any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(m) //nolint:errcheck
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/client.json", func(w http.ResponseWriter, r *http.Request) {
		doc(map[string]any{"client_id": docURL, "client_name": "Claude Code", "redirect_uris": []string{"http://localhost/callback"}, "token_endpoint_auth_method": "none"})(w, r)
	})
	mux.HandleFunc("/wrong-id.json", doc(map[string]any{"client_id": "https://elsewhere.example/c.json", "redirect_uris": []string{"http://localhost/callback"}}))
	mux.HandleFunc("/huge.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_name":"%s"}`, strings.Repeat("x", 100<<10))
	})
	docs := httptest.NewServer(mux)
	defer docs.Close()
	docURL = docs.URL + "/client.json"

	verifier, challenge := pkce("m")
	redirect := "http://localhost:61000/callback"
	q := e.authParams(docURL, redirect, challenge)
	resp, d := e.consent(q)
	if resp.StatusCode != 200 || d.Find(`[data-testid="consent-client-name"]`).Text() != "Claude Code" ||
		!strings.Contains(d.Find(`[data-testid="consent-client-id"]`).Text(), docURL) {
		t.Fatalf("consent for a metadata document client: %d %s", resp.StatusCode, d.Find("main").Text())
	}
	loc := e.decide(d, "approve", []string{store.ScopeRead, store.ScopeWrite}, nil)
	r, tok := e.exchange(docURL, loc.Query().Get("code"), verifier, redirect)
	if r.StatusCode != 200 {
		t.Fatalf("exchange: %d %v", r.StatusCode, tok)
	}
	for _, bad := range []string{docs.URL + "/wrong-id.json", docs.URL + "/huge.json", docs.URL + "/missing.json", docs.URL + "/"} {
		resp, d := e.consent(e.authParams(bad, redirect, challenge))
		if resp.StatusCode != 400 || d.Find(`[data-testid="authorize-error"]`).Length() != 1 {
			t.Errorf("%s: status %d", bad, resp.StatusCode)
		}
	}
	// A metadata document client cannot pretend to be registered with a secret.
	if resp, out := e.formPost("/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}}, docURL, "secret"); resp.StatusCode != 401 {
		t.Fatalf("document client with a secret: %d %v", resp.StatusCode, out)
	}
}

func TestRegistrationRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	limit := 30
	for i := 0; i < limit; i++ {
		e.registerPublic("http://127.0.0.1/cb")
	}
	resp, out := e.jsonPost("/register", map[string]any{"redirect_uris": []string{"http://127.0.0.1/cb"}, "token_endpoint_auth_method": "none"})
	if resp.StatusCode != http.StatusTooManyRequests || out["error"] != "invalid_client_metadata" {
		t.Fatalf("got %d %v", resp.StatusCode, out)
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
