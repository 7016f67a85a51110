package oauth_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/handlers"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

var csrfValue = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// FuzzOAuthParameters sends arbitrary registration documents, token and
// revocation forms and authorization queries (from a signed-in owner):
// whatever arrives, the answer is a 4xx or a success, never a 5xx.
func FuzzOAuthParameters(f *testing.F) {
	seeds := []struct {
		kind uint8
		data string
	}{
		{0, `{"client_name":"x","redirect_uris":["http://localhost/cb","cursor://cb","https://a.example/cb"],"token_endpoint_auth_method":"none"}`},
		{0, `{"redirect_uris":["javascript:alert(1)"],"token_endpoint_auth_method":"client_secret_basic"}`},
		{0, `{"client_name":"\u0000","redirect_uris":[]}`},
		{0, `[1,2,3]`},
		{1, `grant_type=authorization_code&code=abc&code_verifier=x&client_id=y&redirect_uri=http://localhost/cb`},
		{1, `grant_type=refresh_token&refresh_token=osf_rt_x&resource=http%3A%2F%2Fevil%2Fmcp`},
		{1, `grant_type=password&username=a&password=b`},
		{2, `response_type=code&client_id=https%3A%2F%2F127.0.0.1%3A1%2Fmeta.json&redirect_uri=x&code_challenge=abc&code_challenge_method=plain`},
		{2, `response_type=token&client_id=&state=%00`},
		{3, `token=osf_at_x&token_type_hint=access_token`},
	}
	for _, s := range seeds {
		f.Add(s.kind, s.data)
	}
	st := storetest.New(f)
	if _, err := st.CreateOwner(context.Background(), store.NewOwner{Email: "fuzz@example.com", DisplayName: "F", Password: ownerPassword}); err != nil {
		f.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	key := []byte(strings.Repeat("k", 96))
	h := handlers.New(handlers.Deps{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Config: handlers.Config{BaseURL: base, SessionHashKey: key[:64], SessionBlockKey: key[64:]}})
	srv.Config.Handler = h.Handler()
	srv.Start()
	f.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := browser.Get(base + "/login")
	if err != nil {
		f.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfValue.FindSubmatch(page)
	if m == nil {
		f.Fatal("no CSRF token")
	}
	res, err = browser.PostForm(base+"/login", url.Values{"_csrf": {string(m[1])}, "email": {"fuzz@example.com"}, "password": {ownerPassword}})
	if err != nil || res.StatusCode != http.StatusSeeOther {
		f.Fatalf("sign in: %v %v", err, res)
	}
	res.Body.Close()

	f.Fuzz(func(t *testing.T, kind uint8, data string) {
		var req *http.Request
		switch kind % 4 {
		case 0:
			req, _ = http.NewRequest(http.MethodPost, base+"/register", strings.NewReader(data))
			req.Header.Set("Content-Type", "application/json")
		case 1:
			req, _ = http.NewRequest(http.MethodPost, base+"/token", strings.NewReader(data))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		case 2:
			u, err := url.Parse(base + "/authorize")
			if err != nil {
				return
			}
			u.RawQuery = data
			req, err = http.NewRequest(http.MethodGet, u.String(), nil)
			if err != nil {
				return
			}
		default:
			req, _ = http.NewRequest(http.MethodPost, base+"/revoke", strings.NewReader(data))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if req == nil {
			return
		}
		res, err := browser.Do(req)
		if err != nil {
			return // e.g. a query Go's client refuses to send
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 500 {
			t.Fatalf("kind %d %q: status %d: %s", kind%4, data, res.StatusCode, body)
		}
	})
}
