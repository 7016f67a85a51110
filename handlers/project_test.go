package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// xss is what a hostile name, subject or status looks like.
const xss = `<script>alert("x")</script><img src=x onerror=alert(1)>"'&`

// noRawXSS fails when the payload came out unescaped.
func noRawXSS(t *testing.T, html string) {
	t.Helper()
	for _, raw := range []string{"<script>alert", "<img src=x"} {
		if strings.Contains(html, raw) {
			t.Fatalf("unescaped %q in page", raw)
		}
	}
}

func TestProjectsPages(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")

	// Create through the form: redirect to the new project's page.
	res := alice.post("/projects", url.Values{"name": {"Site " + xss}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: status %d", res.StatusCode)
	}
	loc := res.Header.Get("Location")
	doc := alice.doc(alice.get(loc), http.StatusOK)
	if got := doc.Find(`[data-testid="project-name"]`).Text(); got != "Site "+xss {
		t.Fatalf("project name %q", got)
	}
	html, _ := doc.Html()
	noRawXSS(t, html)

	// The list shows it, escaped.
	doc = alice.doc(alice.get("/"), http.StatusOK)
	if got := doc.Find(`[data-testid="project-link"]`).Text(); got != "Site "+xss {
		t.Fatalf("project list %q", got)
	}

	// A duplicate name is refused next to the field.
	doc = alice.doc(alice.post("/projects", url.Values{"name": {"Site " + xss}}), http.StatusUnprocessableEntity)
	if doc.Find(`[data-testid="error-name"]`).Length() != 1 {
		t.Fatal("no error next to the name")
	}

	// Rename.
	res = alice.post(loc+"/rename", url.Values{"name": {"Renamed"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("rename: status %d", res.StatusCode)
	}
	doc = alice.doc(alice.get(loc), http.StatusOK)
	if got := doc.Find(`[data-testid="project-name"]`).Text(); got != "Renamed" {
		t.Fatalf("after rename %q", got)
	}
}

func TestProjectSeatsAndSessions(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")
	p := alice.project("Web")
	ag := app.agent("alice@example.com", "", "bot-1", "Bot "+xss)
	loc := fmt.Sprintf("/projects/%d", p.ID)

	// Seat by handle; an unknown handle (hostile text) is refused, escaped.
	doc := alice.doc(alice.post(loc+"/seats", url.Values{"handle": {xss}}), http.StatusUnprocessableEntity)
	if doc.Find(`[data-testid="error-handle"]`).Length() != 1 {
		t.Fatal("no handle error")
	}
	html, _ := doc.Html()
	noRawXSS(t, html)
	if res := alice.post(loc+"/seats", url.Values{"handle": {"@bot-1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("seat: %d", res.StatusCode)
	}
	doc = alice.doc(alice.get(loc), http.StatusOK)
	if got := doc.Find(`[data-testid="seated-agent"] strong`).Text(); got != "Bot "+xss {
		t.Fatalf("seated agent %q", got)
	}
	html, _ = doc.Html()
	noRawXSS(t, html)

	// Create a session: lands on its page.
	res := alice.post(loc+"/sessions", url.Values{"session_type": {"loop_session"}, "title": {"Loop " + xss}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create session: %d", res.StatusCode)
	}
	sessLoc := res.Header.Get("Location")
	doc = alice.doc(alice.get(sessLoc), http.StatusOK)
	if got := doc.Find(`[data-testid="session-title"]`).Text(); got != "Loop "+xss {
		t.Fatalf("session title %q", got)
	}
	// A bad type or an empty title is refused next to the field.
	doc = alice.doc(alice.post(loc+"/sessions", url.Values{"session_type": {"x"}, "title": {"t"}}), http.StatusUnprocessableEntity)
	if doc.Find(`[data-testid="error-session_type"]`).Length() != 1 {
		t.Fatal("no type error")
	}
	doc = alice.doc(alice.post(loc+"/sessions", url.Values{"session_type": {"team_session"}, "title": {"  "}}), http.StatusUnprocessableEntity)
	if doc.Find(`[data-testid="error-title"]`).Length() != 1 {
		t.Fatal("no title error")
	}

	// Invite, and the list shows participant, newest note and unread count.
	var sid int64
	fmt.Sscanf(sessLoc, "/sessions/%d", &sid)
	if res := alice.post(sessLoc+"/invitations", url.Values{"connection_id": {fmt.Sprint(ag.connID)}, "role": {"runner"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("invite: %d", res.StatusCode)
	}
	app.agentNote(ag, sid, "hello", "world")
	app.agentNote(ag, sid, "again", "world")
	doc = alice.doc(alice.get(loc), http.StatusOK)
	row := doc.Find(`[data-testid="session-item"]`)
	if got := row.Find(`[data-testid="session-participants"]`).Text(); !strings.Contains(got, "bot-1") {
		t.Fatalf("participants %q", got)
	}
	if got := row.Find(`[data-testid="session-unread"]`).Text(); got != "2 unread" {
		t.Fatalf("unread %q", got)
	}
	alice.get(sessLoc)
	doc = alice.doc(alice.get(loc), http.StatusOK)
	if n := doc.Find(`[data-testid="session-unread"]:not([hidden])`).Length(); n != 0 {
		t.Fatal("still unread after opening the session")
	}

	// Unseat.
	if res := alice.post(fmt.Sprintf("%s/seats/%d/remove", loc, ag.connID), nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("unseat: %d", res.StatusCode)
	}
	doc = alice.doc(alice.get(loc), http.StatusOK)
	if doc.Find(`[data-testid="no-agents"]`).Length() != 1 {
		t.Fatal("agent still seated")
	}
}

func TestProjectOtherWorkspaceIs404(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")
	bob := app.owner("bob@example.com", "Bob's")
	p := alice.project("Private")
	loc := fmt.Sprintf("/projects/%d", p.ID)
	bob.doc(bob.get(loc), http.StatusNotFound)
	for _, path := range []string{loc + "/rename", loc + "/seats", loc + "/sessions", loc + "/seats/1/remove"} {
		res := bob.post(path, url.Values{"name": {"x"}, "handle": {"x"}, "session_type": {"team_session"}, "title": {"x"}})
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, res.StatusCode)
		}
	}
	bob.doc(bob.get("/projects/nope"), http.StatusNotFound)
}
