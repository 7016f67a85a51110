package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestUnknownURLsGetTheAppsNotFoundPage: a URL no route matches is the
// app's 404 page, with the navigation when an owner is signed in, as an
// unknown session is.
func TestUnknownURLsGetTheAppsNotFoundPage(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	for _, path := range []string{"/nope", "/sessions/999999", "/projects/1/nope/deeper"} {
		doc := f.alice.doc(f.alice.get(path), http.StatusNotFound)
		if doc.Find(`[data-testid="error-page"]`).Length() != 1 || doc.Find("nav.topnav").Length() != 1 {
			t.Errorf("%s is not the app's 404 page with its navigation", path)
		}
	}
	anon := f.app.client()
	res, body := anon.get("/nope")
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, `data-testid="error-page"`) || !strings.Contains(body, "app.css") {
		t.Errorf("/nope signed out: %d, not the app's 404 page", res.StatusCode)
	}
}

// TestAQuestionBoxSaysTheQuestionWaits: an open question says it waits for
// a decision, never that the agent waits (its call may have returned at
// once, wait_seconds 0).
func TestAQuestionBoxSaysTheQuestionWaits(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	f.ask("q-nowait", "Ship today?", "Ship", "Wait")
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	box := doc.Find(`[data-testid="question-box"]`)
	if strings.Contains(box.Text(), "The agent waits") || !strings.Contains(box.Find(`[data-testid="question-waiting"]`).Text(), "Waiting for your decision") {
		t.Errorf("the open question says %q", box.Find(".question-head").Text())
	}
}

// TestWebhookFormWarnsOfAPrivateURL: while the server refuses private
// targets, an endpoint added with a private URL says at once that nothing
// can be delivered there; when the operator allows them, it says nothing.
func TestWebhookFormWarnsOfAPrivateURL(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{false, true} {
		app := newTestApp(t, func(c *Config) { c.AllowPrivateTargets = allow })
		alice := app.owner("alice@example.com", "")
		p := alice.project("Site")
		hooks := fmt.Sprintf("/projects/%d/webhooks", p.ID)
		alice.refreshCSRF(hooks)
		res := alice.post(hooks, url.Values{"url": {"http://127.0.0.1:9/hook"}, "kind": {"json"}, "fires": {"agents"}})
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("add endpoint: %d", res.StatusCode)
		}
		doc := alice.doc(alice.get(res.Header.Get("Location")), http.StatusOK)
		warned := doc.Find(`[data-testid="webhook-unreachable"]`)
		if (warned.Length() == 1) == allow {
			t.Errorf("private targets allowed %v: warning shown %v (%q)", allow, warned.Length() == 1, warned.Text())
		}
		if !allow && !strings.Contains(warned.Text(), "--allow-private-targets") {
			t.Errorf("the warning does not say how: %q", warned.Text())
		}
	}
}

// TestANewWorkspaceGetsAChecklist: the projects page of a new workspace is a
// checklist (project, session, connect an agent with the exact command,
// invite), each step ticked as it is done, gone once an agent is seated in a
// project with a session; the new-session form says what each type is for.
func TestANewWorkspaceGetsAChecklist(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")
	doc := alice.doc(alice.get("/"), http.StatusOK)
	steps := doc.Find(`[data-testid="first-steps"]`)
	if steps.Length() != 1 || steps.Find("li").Length() != 4 || steps.Find("li[data-done]").Length() != 0 {
		t.Fatalf("a new workspace's checklist: %q", steps.Text())
	}
	login := steps.Find(`[data-testid="copy-first-step-login"]`).Text()
	if want := "agent login --server " + app.srv.URL + " --handle "; !strings.Contains(login, want) {
		t.Errorf("the connect step says %q, want %q in it", login, want)
	}
	p := alice.project("Site")
	doc = alice.doc(alice.get("/"), http.StatusOK)
	if _, done := doc.Find(`[data-testid="first-step-project"]`).Attr("data-done"); !done {
		t.Error("the project step is not ticked once a project exists")
	}
	page := alice.doc(alice.get(fmt.Sprintf("/projects/%d", p.ID)), http.StatusOK)
	hints := page.Find(`[data-testid="session-type-hints"] li`)
	if hints.Length() != 3 || !strings.Contains(hints.Text(), "Loop session") || !strings.Contains(hints.Text(), "again and again") {
		t.Errorf("the new-session form's types: %q", hints.Text())
	}
	alice.session(p, "Week one")
	app.agent("alice@example.com", p.Name, "claude-1", "Claude")
	if alice.doc(alice.get("/"), http.StatusOK).Find(`[data-testid="first-steps"]`).Length() != 0 {
		t.Error("the checklist stays once an agent is seated in a project with a session")
	}
}
