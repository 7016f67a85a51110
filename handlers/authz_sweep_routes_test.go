package handlers

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestSweepRoutes calls every route of the table as an owner of another
// workspace, signed out, and (for POSTs) without the CSRF token.
func TestSweepRoutes(t *testing.T) {
	t.Parallel()
	w := newSweepWorld(t)
	table := w.routeTable()
	routes := w.app.h.routes()
	seen := map[string]bool{}
	for _, r := range routes {
		key := r.method + " " + r.path
		seen[key] = true
		row, ok := table[key]
		if !ok {
			t.Errorf("route %s (%s) has no row in the authorization sweep: add one", key, r.name)
			continue
		}
		if (r.access == accessPublic) != (row.public != "") {
			t.Errorf("route %s is %q but its sweep row says public=%q", key, r.access, row.public)
		}
	}
	for key := range table {
		if !seen[key] {
			t.Errorf("the sweep has a row for %s, which is not a route any more", key)
		}
	}
	// Routes that end the caller's session go last.
	sort.SliceStable(routes, func(i, j int) bool {
		return !table[routes[i].method+" "+routes[i].path].signsOut && table[routes[j].method+" "+routes[j].path].signsOut
	})
	aliceWS := w.alice.owner.WorkspaceID

	t.Run("public routes say why", func(t *testing.T) {
		anon := w.app.client()
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access != accessPublic {
				continue
			}
			path := w.path(r)
			res := w.request(t, anon.http, r.method, path, nil, "", false)
			if res.status >= 500 || isLoginRedirect(res) {
				t.Errorf("%s %s (public: %s): %s", r.method, path, row.public, res)
			}
			noSecrets(t, r.method+" "+path, res.body, secretsOfA)
		}
	})

	// Bob's own project and session, with A's agent, webhook or note named
	// inside: never a 403 or a 500, never A's data, never a change in A.
	t.Run("own ids mixed with another workspace's", func(t *testing.T) {
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			// (connections/:id is bob's own connection here: nothing is mixed.)
			if !ok || r.access < accessOwner || !strings.Contains(r.path, ":id") || strings.HasPrefix(r.path, "/connections/") {
				continue
			}
			path := w.bobPath(r) + row.query
			beforeA := w.app.digest(aliceWS)
			res := w.request(t, w.bob.http, r.method, path, row.form, w.bob.csrf, true)
			what := fmt.Sprintf("bob %s %s", r.method, path)
			if res.status >= 500 || res.status == http.StatusForbidden {
				t.Errorf("%s: %s", what, res)
			}
			if (strings.Contains(r.path, ":conn") || strings.Contains(r.path, ":hook") || strings.Contains(r.path, ":note")) && res.status != http.StatusNotFound {
				t.Errorf("%s: %s, want 404 for A's connection, webhook endpoint or note", what, res)
			}
			noSecrets(t, what, res.body, secretsOfA)
			if w.app.digest(aliceWS) != beforeA {
				t.Errorf("%s changed workspace A", what)
			}
		}
	})

	// Bob signs out at the end of this one.
	t.Run("owner of another workspace", func(t *testing.T) {
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access == accessPublic {
				continue
			}
			want := row.other
			if want == 0 {
				want = http.StatusNotFound
			}
			path := w.path(r) + row.query
			for _, htmx := range []bool{false, true} {
				if htmx && r.method != http.MethodGet {
					continue
				}
				beforeA, before := w.app.digest(aliceWS), w.app.digest(0)
				res := w.request(t, w.bob.http, r.method, path, row.form, w.bob.csrf, htmx)
				what := fmt.Sprintf("bob %s %s (htmx %v)", r.method, path, htmx)
				if res.status != want {
					t.Errorf("%s: %s, want %d", what, res, want)
				}
				noSecrets(t, what, res.body, secretsOfA)
				if w.app.digest(aliceWS) != beforeA {
					t.Errorf("%s changed workspace A", what)
				}
				if want == http.StatusNotFound && w.app.digest(0) != before {
					t.Errorf("%s: refused, yet the database changed", what)
				}
			}
		}
	})

	t.Run("signed out", func(t *testing.T) {
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access == accessPublic {
				continue
			}
			path := w.path(r) + row.query
			before := w.app.digest(0)
			anon := w.app.client()
			if r.method == http.MethodPost {
				// No cookie, no token: refused before anything else.
				res := w.request(t, anon.http, r.method, path, row.form, "", false)
				if res.status != http.StatusForbidden {
					t.Errorf("signed out POST %s without a token: %s, want 403", path, res)
				}
				noSecrets(t, "signed out POST "+path, res.body, secretsOfA)
			}
			// A signed-out visitor with a valid token (from the sign-in page).
			tok := anon.csrf("/login")
			res := w.request(t, anon.http, r.method, path, row.form, tok, false)
			what := fmt.Sprintf("signed out %s %s", r.method, path)
			switch {
			case row.signedOut != 0 && res.status != row.signedOut:
				t.Errorf("%s: %s, want %d", what, res, row.signedOut)
			case row.signedOut == 0 && !isLoginRedirect(res):
				t.Errorf("%s: %s, want a redirect to /login", what, res)
			}
			noSecrets(t, what, res.body, secretsOfA)
			if w.app.digest(0) != before {
				t.Errorf("%s changed the database", what)
			}
		}
	})

	t.Run("CSRF", func(t *testing.T) {
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access == accessPublic || r.method != http.MethodPost {
				continue
			}
			path := w.path(r) + row.query
			before := w.app.digest(0)
			for _, tok := range []string{"", "forged-" + w.alice.csrf} {
				res := w.request(t, w.alice.http, r.method, path, row.form, tok, false)
				if res.status != http.StatusForbidden {
					t.Errorf("alice POST %s with token %q: %s, want 403", path, tok, res)
				}
			}
			if w.app.digest(0) != before {
				t.Errorf("a POST %s refused for its CSRF token changed the database", path)
			}
		}
		// Still signed in: the refused logout did nothing.
		if res := w.request(t, w.alice.http, http.MethodGet, "/", nil, "", false); res.status != http.StatusOK {
			t.Errorf("alice after the CSRF sweep: %s", res)
		}
	})

	// The control: alice's own GETs answer and show what the others must not see.
	t.Run("owner of the workspace", func(t *testing.T) {
		for _, r := range routes {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access < accessOwner || r.method != http.MethodGet || !strings.Contains(r.path, ":id") {
				continue
			}
			path := w.path(r) + row.query
			res := w.request(t, w.alice.http, r.method, path, nil, "", true)
			if res.status != http.StatusOK {
				t.Errorf("alice GET %s: %s", path, res)
				continue
			}
			if !slices.ContainsFunc(secretsOfA, func(s string) bool { return strings.Contains(res.body, s) }) {
				t.Errorf("alice GET %s shows none of A's names, so the sweep proves nothing there:\n%s", path, truncate(res.body))
			}
		}
	})
}
