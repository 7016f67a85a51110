package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

func TestTamperedCookieIsIgnored(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	if _, err := app.store.CreateOwner(context.Background(), store.NewOwner{Email: "a@example.com", DisplayName: "A", Password: "long enough password"}); err != nil {
		t.Fatal(err)
	}
	c := app.client()
	res, _ := c.post("/login", url.Values{"_csrf": {c.csrf("/login")}, "email": {"a@example.com"}, "password": {"long enough password"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatal(res.StatusCode)
	}
	u, _ := url.Parse(app.srv.URL)
	cookies := c.http.Jar.Cookies(u)
	if len(cookies) != 1 {
		t.Fatalf("cookies: %v", cookies)
	}
	v := []byte(cookies[0].Value)
	v[len(v)/2] ^= 1
	req, _ := http.NewRequest(http.MethodGet, app.srv.URL+"/", nil)
	req.AddCookie(&http.Cookie{Name: web.CookieName, Value: string(v)})
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("tampered cookie: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}
