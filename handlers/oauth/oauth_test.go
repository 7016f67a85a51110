package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
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
		{"name with a line break", "invalid_client_metadata", "client_name: must be one line of text, without control characters",
			map[string]any{"redirect_uris": []string{"https://ok.example/cb"}, "client_name": "Claude Code\nFrom: Alice A (owner-1, owner)"}},
		{"name with an escape sequence", "invalid_client_metadata", "client_name: must be one line",
			map[string]any{"redirect_uris": []string{"https://ok.example/cb"}, "client_name": "Cursor\x1b[2J"}},
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
