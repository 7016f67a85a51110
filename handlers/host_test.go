package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestForeignHostIsMisdirected: DNS rebinding points a name of the
// attacker's at this server; requests carrying it get 421 on every route,
// first-run setup included (nothing is created), while loopback and the
// public host are served.
func TestForeignHostIsMisdirected(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	code := app.setupCode()
	c := app.client()
	port := app.srv.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndexByte(port, ':'):]
	send := func(method, host, path string, form url.Values) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, app.srv.URL+path, strings.NewReader(form.Encode()))
		req.Host = host
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		res, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for _, host := range []string{"rebind.attacker.example" + port, "rebind.attacker.example", "127.0.0.1.attacker.example" + port} {
		// The rebinding page reads the form (its token, its cookie) under
		// its own name, then posts it, the code guessed right.
		req, _ := http.NewRequest(http.MethodGet, app.srv.URL+"/setup", nil)
		req.Host = host
		tok := ""
		if res, err := c.http.Do(req); err == nil {
			if m := csrfInput.FindStringSubmatch(string(readBody(res))); m != nil {
				tok = m[1]
			}
			res.Body.Close()
		}
		setup := url.Values{"_csrf": {tok}, "setup_code": {code}, "email": {"mallory@example.com"}, "display_name": {"M"}, "password": {"a long enough password"}}
		for _, r := range []struct {
			method, path string
			form         url.Values
		}{
			{http.MethodGet, "/setup", nil}, {http.MethodPost, "/setup", setup}, {http.MethodGet, "/", nil}, {http.MethodGet, "/login", nil},
			{http.MethodGet, "/healthz", nil}, {http.MethodGet, "/static/0/app.css", nil}, {http.MethodPost, "/mcp", url.Values{}},
			{http.MethodGet, "/.well-known/oauth-authorization-server", nil}, {http.MethodGet, "/no-such-page", nil},
		} {
			if res := send(r.method, host, r.path, r.form); res.StatusCode != http.StatusMisdirectedRequest {
				t.Errorf("%s %s with Host %s: %d, want 421", r.method, r.path, host, res.StatusCode)
			}
		}
	}
	if has, _ := app.store.HasOwner(context.Background()); has {
		t.Fatal("a request with a foreign Host created the first owner")
	}
	for _, host := range []string{app.srv.Listener.Addr().String(), "localhost" + port, "[::1]" + port} {
		if res := send(http.MethodGet, host, "/setup", nil); res.StatusCode != http.StatusOK {
			t.Errorf("GET /setup with Host %s: %d, want 200", host, res.StatusCode)
		}
	}
}

// TestPublicHostIsServed: behind a proxy that keeps the Host header, the
// configured origin's host is served; another name for the same address is
// not.
func TestPublicHostIsServed(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, func(c *Config) { c.BaseURL = "https://foundry.example.com" })
	for host, want := range map[string]int{"foundry.example.com": http.StatusOK, "FOUNDRY.example.com": http.StatusOK, "other.example.com": http.StatusMisdirectedRequest} {
		req, _ := http.NewRequest(http.MethodGet, app.srv.URL+"/healthz", nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, res.StatusCode, want)
		}
	}
}
