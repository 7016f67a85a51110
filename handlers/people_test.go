package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
)

// TestInvitePersonAndJoin: an admin invites an email as a member; the link
// is shown once; the invitee sets a name and password and is signed in as
// a member, who sees no admin pages; the used link says so.
func TestInvitePersonAndJoin(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")
	doc := alice.doc(alice.post("/people/invitations", url.Values{"email": {"mia@example.com"}, "role": {"member"}}), http.StatusOK)
	link := doc.Find(`[data-testid="invite-link"]`).AttrOr("value", "")
	if !strings.HasPrefix(link, app.srv.URL+"/join/") {
		t.Fatalf("invitation link %q", link)
	}
	if doc.Find(`[data-testid="invite"]`).Length() != 1 {
		t.Fatal("the open invitation is not listed")
	}
	// Shown once: the People page does not show it again.
	if alice.doc(alice.get("/people"), http.StatusOK).Find(`[data-testid="invite-link"]`).Length() != 0 {
		t.Fatal("the link is shown again")
	}
	path := strings.TrimPrefix(link, app.srv.URL)
	mia := &ownerClient{client: app.client()}
	form := mia.doc(mia.get(path), http.StatusOK)
	if form.Find(`[data-testid="join-role"]`).Text() != "member" {
		t.Fatal("the join page does not say the role")
	}
	mia.csrf = form.Find(`input[name="_csrf"]`).AttrOr("value", "")
	if res := mia.post(path, url.Values{"display_name": {"Mia"}, "password": {"short"}}); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a short password: %d", res.StatusCode)
	}
	res := mia.post(path, url.Values{"display_name": {"Mia"}, "password": {testPassword}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("join: %d", res.StatusCode)
	}
	home := mia.doc(mia.get("/"), http.StatusOK)
	if got := home.Find(`[data-testid="signed-in-as"]`).Text(); got != "Mia" {
		t.Fatalf("signed in as %q", got)
	}
	if home.Find(`[data-testid="nav-people"]`).Length() != 0 || home.Find(`body[data-role="member"]`).Length() != 1 {
		t.Fatal("a member's page offers People, or does not say the role")
	}
	if res := mia.get("/people"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a member's People page: %d", res.StatusCode)
	}
	// The link worked once.
	other := &ownerClient{client: app.client()}
	gone := other.doc(other.get(path), http.StatusGone)
	if !strings.Contains(gone.Find(`[data-testid="join-error"]`).Text(), "used already") {
		t.Fatalf("a used link says %q", gone.Find(`[data-testid="join-error"]`).Text())
	}
	// The audit log has the invitation and the joining.
	audit := alice.doc(alice.get("/audit"), http.StatusOK)
	kinds := map[string]bool{}
	audit.Find(`[data-testid="audit-row"]`).Each(func(_ int, s *goquery.Selection) { kinds[s.AttrOr("data-kind", "")] = true })
	if !kinds[string(store.AuditPersonInvited)] || !kinds[string(store.AuditPersonJoined)] {
		t.Fatalf("audit kinds %v", kinds)
	}
}

// TestViewerSeesNoComposer: a viewer's session page has no composer, no
// Reply and no answer buttons; a forged POST (with a valid CSRF token)
// answers 403 and writes nothing.
func TestViewerSeesNoComposer(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	q := f.ask("q1", "Ship it?", "yes", "no")
	f.app.agentNote(f.ag, f.session.ID, "status", "half done")
	vic := f.app.roleClient("vic@example.com", f.alice.owner.WorkspaceName, store.RoleViewer)
	doc := vic.doc(vic.get(f.url), http.StatusOK)
	for _, sel := range []string{`#session-compose`, `[data-testid="reply-button"]`, `[data-testid="question-options"]`, `[data-testid="question-free"]`} {
		if n := doc.Find(sel).Length(); n != 0 {
			t.Errorf("a viewer's session page has %d of %s", n, sel)
		}
	}
	if doc.Find(`[data-testid="question-viewer"]`).Length() != 1 {
		t.Error("the question does not say who answers")
	}
	pages := map[string][]string{
		fmt.Sprintf("/projects/%d", f.p.ID): {`[data-testid="session-create-form"]`, `[data-testid="seat-form"]`, `[data-testid="unseat"]`,
			`[data-testid="project-rename-form"]`, `[data-testid="project-webhooks"]`, `[data-testid="project-questions-form"]`},
		"/connections":          {`[data-testid="static-token-form"]`, `[data-testid="connection-revoke"]`},
		"/":                     {`[data-testid="project-create-form"]`, `[data-testid="nav-people"]`, `[data-testid="nav-audit"]`},
		f.url + "/participants": {`[data-testid="invite-form"]`, `[data-testid="participant-remove"]`},
	}
	for path, sels := range pages {
		pdoc := vic.doc(vic.get(path), http.StatusOK)
		for _, sel := range sels {
			if n := pdoc.Find(sel).Length(); n != 0 {
				t.Errorf("a viewer's %s has %d of %s", path, n, sel)
			}
		}
	}
	// The admin's page has them all.
	adoc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	for _, sel := range []string{`#session-compose`, `[data-testid="reply-button"]`, `[data-testid="question-options"]`} {
		if adoc.Find(sel).Length() == 0 {
			t.Errorf("the admin's session page has no %s", sel)
		}
	}
	before := f.app.digest(0)
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{f.url + "/mail", url.Values{"type": {"note"}, "subject": {"x"}, "body": {"forged"}}},
		{f.answerURL(q), url.Values{"option": {"0"}}},
	} {
		res := vic.post(post.path, post.form)
		body := string(readBody(res))
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "Your role is viewer") {
			t.Errorf("a viewer's POST %s: %d", post.path, res.StatusCode)
		}
	}
	if f.app.digest(0) != before {
		t.Error("a viewer's refused POST changed the database")
	}
}

// TestRemovalEndsSignInOnEveryReplica: an admin removes a person; their
// sign-ins end at once here and on a second replica as soon as it hears of
// it; their notes keep their name; the last admin cannot be demoted.
func TestRemovalEndsSignInOnEveryReplica(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	app := f.app
	mia := app.roleClient("mia@example.com", f.alice.owner.WorkspaceName, store.RoleMember)
	if res := mia.post(f.url+"/mail", url.Values{"type": {"note"}, "subject": {"hello"}, "body": {"from Mia"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("mia's note: %d", res.StatusCode)
	}
	site, _ := url.Parse(app.srv.URL)
	cookies := mia.http.Jar.Cookies(site)
	_, bsrv := app.replica()
	onB := func() int {
		req, _ := http.NewRequest(http.MethodGet, bsrv.URL+"/", nil)
		for _, ck := range cookies {
			req.AddCookie(ck)
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := onB(); got != http.StatusOK {
		t.Fatalf("mia on replica B before removal: %d", got)
	}
	// The last admin cannot be demoted; the page says why.
	doc := f.alice.doc(f.alice.post(fmt.Sprintf("/people/%d/role", f.alice.owner.ID), url.Values{"role": {"member"}}), http.StatusUnprocessableEntity)
	if !strings.Contains(doc.Find(`[data-testid="people-error"]`).Text(), "last admin") {
		t.Fatal("demoting the last admin does not say why it is refused")
	}
	if res := f.alice.post(fmt.Sprintf("/people/%d/remove", mia.owner.ID), nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove: %d", res.StatusCode)
	}
	if res := mia.get("/"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("mia here after removal: %d", res.StatusCode)
	}
	deadline := time.Now().Add(5 * time.Second)
	for onB() == http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("replica B still signs mia in 5 s after her removal")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var name string
	app.sql().QueryRow(`SELECT sender_name FROM notes WHERE body = 'from Mia'`).Scan(&name)
	if name != "Person mia@example.com" {
		t.Fatalf("mia's note after removal is from %q", name)
	}
	// Her email can be invited again.
	if res := f.alice.post("/people/invitations", url.Values{"email": {"mia@example.com"}, "role": {"viewer"}}); res.StatusCode != http.StatusOK {
		t.Fatalf("inviting mia again: %d", res.StatusCode)
	}
}
