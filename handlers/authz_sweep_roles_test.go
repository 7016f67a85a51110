package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// roleClient creates a person of role in the workspace named ws and signs
// them in.
func (a *testApp) roleClient(email, ws string, role store.Role) *ownerClient {
	a.t.Helper()
	o, err := a.store.CreateOwner(context.Background(), store.NewOwner{Email: email, DisplayName: "Person " + email,
		Password: testPassword, WorkspaceName: ws, Role: role})
	if err != nil {
		a.t.Fatal(err)
	}
	c := &ownerClient{client: a.client(), owner: o}
	c.refreshCSRF("/login")
	if res := c.post("/login", url.Values{"email": {email}, "password": {testPassword}}); res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("sign in %s: status %d", email, res.StatusCode)
	}
	c.refreshCSRF("/")
	return c
}

// TestSweepRoles calls every signed-in route of the table as a member and
// as a viewer of workspace A: a route their role may not use answers 403
// with a sentence and writes nothing; one it may use is never a 403.
func TestSweepRoles(t *testing.T) {
	t.Parallel()
	w := newSweepWorld(t)
	table := w.routeTable()
	ws := w.alice.owner.WorkspaceName
	people := map[store.Role]*ownerClient{
		store.RoleMember: w.app.roleClient("mia@example.com", ws, store.RoleMember),
		store.RoleViewer: w.app.roleClient("vic@example.com", ws, store.RoleViewer),
	}
	need := map[access]store.Role{accessOwner: store.RoleViewer, accessMember: store.RoleMember, accessAdmin: store.RoleAdmin}
	for _, role := range []store.Role{store.RoleMember, store.RoleViewer} {
		c := people[role]
		for _, r := range w.app.h.routes() {
			row, ok := table[r.method+" "+r.path]
			if !ok || r.access < accessOwner || row.signsOut {
				continue
			}
			path := w.path(r) + row.query
			before := w.app.digest(0)
			res := w.request(t, c.http, r.method, path, row.form, c.csrf, false)
			what := fmt.Sprintf("%s %s %s", role, r.method, path)
			if role.May(need[r.access]) {
				if res.status == http.StatusForbidden || res.status >= 500 {
					t.Errorf("%s: %s, want it allowed", what, res)
				}
				continue
			}
			if res.status != http.StatusForbidden || !strings.Contains(strings.ToLower(res.body), "your role is "+string(role)) {
				t.Errorf("%s: %s, want 403 saying the role", what, res)
			}
			if w.app.digest(0) != before {
				t.Errorf("%s: refused, yet the database changed", what)
			}
		}
	}
}
