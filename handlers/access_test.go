package handlers

import (
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// middlewareName names a middleware function the way a reader writes it:
// "web.CheckFormText", "(*Server).requireOwner".
func middlewareName(f any) string {
	name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	name = strings.TrimSuffix(name, "-fm")
	return strings.TrimPrefix(name[strings.LastIndex(name, "/")+1:], "handlers.")
}

// TestRouteAccessIsValid checks that every route of the table has one of
// the access levels, and that any other value stops the server at start.
func TestRouteAccessIsValid(t *testing.T) {
	t.Parallel()
	s := &Server{}
	valid := []access{accessPublic, accessWeb, accessOwner, accessMember, accessAdmin}
	for _, r := range s.routes() {
		if !slices.Contains(valid, r.access) {
			t.Errorf("route %s %s (%s) has access %v, not public, web, owner, member or admin", r.method, r.path, r.name, r.access)
		}
	}
	for _, a := range []access{0, accessAdmin + 1, 255} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("guard(%v) did not panic: a route with that access would be served unguarded", a)
				}
			}()
			s.guard(a)
		}()
	}
}

// TestGuardChains pins the middleware of each access level, outermost first.
func TestGuardChains(t *testing.T) {
	t.Parallel()
	s := &Server{}
	webChain := []string{"web.CheckFormText", "web.(*Sessions).Load", "web.CheckCSRF"}
	owner := append(slices.Clone(webChain), "(*Server).requireOwner")
	for a, want := range map[access][]string{
		accessPublic: nil,
		accessWeb:    webChain,
		accessOwner:  owner,
		accessMember: append(slices.Clone(owner), "(*Server).requireMember"),
		accessAdmin:  append(slices.Clone(owner), "(*Server).requireAdmin"),
	} {
		var got []string
		for _, mw := range s.guard(a) {
			got = append(got, middlewareName(mw))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v routes: middleware %v, want %v", a, got, want)
		}
	}
}

// TestAccessLevelsThroughTheRouter calls every route of the table through
// the real router and checks what its access level promises: a public route
// opens no cookie session; web and owner routes do and refuse a POST without
// the CSRF token; an owner route sends a signed-out visitor to sign in and
// lets a signed-in owner through.
func TestAccessLevelsThroughTheRouter(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")
	for _, r := range app.h.routes() {
		path := strings.NewReplacer(":id", "1", ":conn", "1", ":hook", "1", "*", "app.css").Replace(r.path)
		what := r.method + " " + path + " (" + r.access.String() + ")"
		send := func(c *client, form url.Values) *http.Response {
			t.Helper()
			var req *http.Request
			if r.method == http.MethodPost {
				req, _ = http.NewRequest(r.method, app.srv.URL+path, strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			} else {
				req, _ = http.NewRequest(r.method, app.srv.URL+path, nil)
			}
			res, _ := c.do(req)
			return res
		}
		opensSession := func(res *http.Response) bool {
			return slices.ContainsFunc(res.Cookies(), func(c *http.Cookie) bool { return c.Name == web.CookieName })
		}
		toLogin := func(res *http.Response) bool {
			return res.StatusCode == http.StatusSeeOther && strings.HasPrefix(res.Header.Get("Location"), "/login")
		}

		res := send(app.client(), nil)
		switch r.access {
		case accessPublic:
			if opensSession(res) || toLogin(res) {
				t.Errorf("%s: a public route opened a cookie session or asked to sign in (status %d)", what, res.StatusCode)
			}
			continue
		case accessWeb, accessOwner, accessMember, accessAdmin:
			if !opensSession(res) {
				t.Errorf("%s: no cookie session opened (status %d)", what, res.StatusCode)
			}
		}
		if r.method == http.MethodPost && res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: POST without a CSRF token: %d, want 403", what, res.StatusCode)
		}
		if r.access < accessOwner {
			continue
		}
		anon := app.client()
		form := url.Values{web.CSRFField: {anon.csrf("/login")}}
		res = send(anon, form)
		want := "/login"
		if r.method == http.MethodGet {
			want += "?next=" + url.QueryEscape(path)
		}
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("%s: signed out: %d to %q, want 303 to %q", what, res.StatusCode, res.Header.Get("Location"), want)
		}
		if r.method == http.MethodGet {
			if res := send(alice.client, nil); toLogin(res) {
				t.Errorf("%s: a signed-in owner was sent to sign in", what)
			}
		}
	}
}
