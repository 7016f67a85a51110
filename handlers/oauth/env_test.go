package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/handlers"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// clock is a movable time source for the server under test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const ownerPassword = "correct horse battery"

// env is a running osFoundry on a loopback port with one signed-in owner.
type env struct {
	t       *testing.T
	base    string
	st      *store.Store
	clock   *clock
	owner   *store.Owner
	browser *http.Client
	api     *http.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv with the server's configuration changed by tune.
func newEnvWith(t *testing.T, tune func(*handlers.Config)) *env {
	t.Helper()
	st := storetest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ck := &clock{t: time.Now()}
	key := make([]byte, 96)
	for i := range key {
		key[i] = byte(i + 1)
	}
	// Private targets are allowed: the metadata documents the tests serve are on loopback.
	cfg := handlers.Config{BaseURL: base, SessionHashKey: key[:64], SessionBlockKey: key[64:], AllowPrivateTargets: true}
	if tune != nil {
		tune(&cfg)
	}
	h := handlers.New(handlers.Deps{
		Store:  st,
		Config: cfg,
		Logger: slog.New(slog.NewTextHandler(testLogOutput(t), nil)),
		Test:   handlers.TestDeps{Now: ck.Now},
	})
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h.Handler()}}
	srv.Start()
	t.Cleanup(srv.Close)
	o, err := st.CreateOwner(context.Background(), store.NewOwner{Email: "owner@example.com", DisplayName: "Olivia", Password: ownerPassword})
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	noFollow := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	e := &env{
		t: t, base: base, st: st, clock: ck, owner: o,
		browser: &http.Client{Jar: jar, CheckRedirect: noFollow, Timeout: 30 * time.Second},
		api:     &http.Client{CheckRedirect: noFollow, Timeout: 30 * time.Second},
	}
	return e
}

func (e *env) resource() string { return e.base + "/mcp" }

// doc fetches a page with the browser and parses it.
func (e *env) doc(path string) (*http.Response, *goquery.Document) {
	e.t.Helper()
	resp, err := e.browser.Get(e.base + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	d, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, d
}

// csrf returns the CSRF token of the browser's session (from the sign-in page).
func csrfOf(d *goquery.Document) string {
	v, _ := d.Find(`input[name="_csrf"]`).First().Attr("value")
	return v
}

// signIn signs the browser in as the owner.
func (e *env) signIn() {
	e.t.Helper()
	_, d := e.doc("/login")
	resp, err := e.browser.PostForm(e.base+"/login", url.Values{"_csrf": {csrfOf(d)}, "email": {e.owner.Email}, "password": {ownerPassword}, "next": {"/"}})
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("sign in: status %d", resp.StatusCode)
	}
}

// jsonPost sends a JSON body and decodes the JSON answer.
func (e *env) jsonPost(path string, body any) (*http.Response, map[string]any) {
	e.t.Helper()
	b, _ := json.Marshal(body)
	return e.answer(e.api.Post(e.base+path, "application/json", strings.NewReader(string(b))))
}

// formPost sends a form to the token or revoke endpoint and decodes the JSON answer.
func (e *env) formPost(path string, f url.Values, basicUser, basicPass string) (*http.Response, map[string]any) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.base+path, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basicUser != "" {
		req.SetBasicAuth(url.QueryEscape(basicUser), url.QueryEscape(basicPass))
	}
	return e.answer(e.api.Do(req))
}

// answer decodes the JSON answer to a request, failing the test when the
// request was not answered.
func (e *env) answer(resp *http.Response, err error) (*http.Response, map[string]any) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp, out
}

// registerPublic registers a public client with the given redirect URIs.
func (e *env) registerPublic(redirects ...string) string {
	e.t.Helper()
	resp, out := e.jsonPost("/register", map[string]any{
		"client_name": "Test Agent", "redirect_uris": redirects, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
	})
	if resp.StatusCode != http.StatusCreated {
		e.t.Fatalf("register: %d %v", resp.StatusCode, out)
	}
	return out["client_id"].(string)
}

// pkce returns a verifier and its S256 challenge.
func pkce(seed string) (verifier, challenge string) {
	verifier = strings.Repeat(seed, 64)[:64]
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authParams builds a valid authorization request.
func (e *env) authParams(clientID, redirect, challenge string) url.Values {
	return url.Values{
		"client_id": {clientID}, "redirect_uri": {redirect}, "response_type": {"code"}, "state": {"st-123"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"},
		"scope": {"osfoundry:read osfoundry:write"}, "resource": {e.resource()},
	}
}

// consent opens /authorize?q as the (signed-in) browser and returns the consent page.
func (e *env) consent(q url.Values) (*http.Response, *goquery.Document) {
	e.t.Helper()
	return e.doc("/authorize?" + q.Encode())
}

// decide submits the consent form with the given decision, granted scopes
// and projects, and returns the redirect Location.
func (e *env) decide(d *goquery.Document, decision string, grants []string, projects []string) *url.URL {
	e.t.Helper()
	resp := e.submitConsent(d, decision, grants, projects)
	if resp.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("consent %s: status %d", decision, resp.StatusCode)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// submitConsent posts the consent form (its hidden fields and the agent it
// preselected, plus the choices).
func (e *env) submitConsent(d *goquery.Document, decision string, grants []string, projects []string) *http.Response {
	e.t.Helper()
	f := url.Values{}
	d.Find(`form[data-testid="consent-form"] input[type="hidden"], form[data-testid="consent-form"] input[type="radio"][checked]`).Each(func(_ int, s *goquery.Selection) {
		n, _ := s.Attr("name")
		v, _ := s.Attr("value")
		if n != "grant" {
			f.Add(n, v)
		}
	})
	f["grant"] = grants
	f["project"] = projects
	f.Set("decision", decision)
	resp, err := e.browser.PostForm(e.base+"/authorize", f)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// approve runs the consent flow for q with every requested scope and returns the code.
func (e *env) approve(q url.Values) string {
	e.t.Helper()
	resp, d := e.consent(q)
	if resp.StatusCode != http.StatusOK || d.Find(`[data-testid="consent"]`).Length() != 1 {
		e.t.Fatalf("consent page: status %d: %s", resp.StatusCode, d.Find("main").Text())
	}
	loc := e.decide(d, "approve", []string{store.ScopeRead, store.ScopeWrite}, nil)
	code := loc.Query().Get("code")
	if code == "" {
		e.t.Fatalf("no code in %s", loc)
	}
	return code
}

// exchange redeems a code at the token endpoint as a public client.
func (e *env) exchange(clientID, code, verifier, redirect string) (*http.Response, map[string]any) {
	e.t.Helper()
	return e.formPost("/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"redirect_uri": {redirect}, "client_id": {clientID}, "resource": {e.resource()},
	}, "", "")
}

// refresh exchanges a refresh token as a public client.
func (e *env) refresh(clientID, rt string) (*http.Response, map[string]any) {
	e.t.Helper()
	return e.formPost("/token", url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {clientID}, "resource": {e.resource()},
	}, "", "")
}

// verify reports whether an access token is accepted for /mcp, using it as
// /mcp does.
func (e *env) verify(token string) (*store.TokenInfo, bool) {
	ti, err := e.st.UseAccessToken(context.Background(), token, e.resource())
	return ti, err == nil
}

// connectionOf returns the connection an access token belongs to.
func (e *env) connection(id int64) *store.Connection {
	e.t.Helper()
	c, err := e.st.GetConnection(context.Background(), e.owner.WorkspaceID, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// fullGrant registers a client, approves it and exchanges the code; it
// returns the client id and the token response.
func (e *env) fullGrant() (string, map[string]any) {
	e.t.Helper()
	e.signIn()
	redirect := "http://127.0.0.1/callback"
	clientID := e.registerPublic(redirect)
	verifier, challenge := pkce("v")
	code := e.approve(e.authParams(clientID, "http://127.0.0.1:4711/callback", challenge))
	resp, tok := e.exchange(clientID, code, verifier, "http://127.0.0.1:4711/callback")
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("exchange: %d %v", resp.StatusCode, tok)
	}
	return clientID, tok
}

// testLogOutput sends the server's log to the test log when -v is given.
func testLogOutput(t *testing.T) io.Writer {
	if testing.Verbose() {
		return tWriter{t}
	}
	return io.Discard
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
