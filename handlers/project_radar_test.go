package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestOwnersSeeOneWarningPerCollision: two agents seated in a project say
// they are on one repository (written two ways) and branch: the presence
// sidebar and the project page each show one warning naming both; its poll
// answers 204 while nothing changes and drops the warning once one of them
// moves to another branch.
func TestOwnersSeeOneWarningPerCollision(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	bob := f.invitedAgent("bob-claude", "Bob")
	f.app.setStatus(f.ag, new("https://github.com/Acme/Shop.git"), new("fix/orders-total"), new("rounding"))
	f.app.setStatus(bob, new("acme/shop"), new("fix/orders-total"), new("refunds"))

	project := fmt.Sprintf("/projects/%d", f.p.ID)
	for _, page := range []string{f.url, project} {
		doc := f.alice.doc(f.alice.get(page), http.StatusOK)
		w := doc.Find(`[data-testid="overlap-warning"]`)
		if w.Length() != 1 || w.Find(`[data-testid="overlap-agents"]`).Text() != "@bob-claude and @claude-1" ||
			w.AttrOr("data-repo", "") != "acme/shop" || !strings.Contains(w.Text(), "fix/orders-total") {
			t.Fatalf("%s: %d warnings: %q", page, w.Length(), w.Text())
		}
	}
	if n := f.alice.doc(f.alice.get(f.url), http.StatusOK).Find(`[data-testid="presence-agent"].overlapping`).Length(); n != 2 {
		t.Fatalf("%d sidebar rows marked overlapping, want both", n)
	}

	doc := f.alice.doc(f.alice.get(project), http.StatusOK)
	poll := doc.Find(`[data-testid="project-radar"]`).AttrOr("hx-get", "")
	if res := f.alice.get(poll); res.StatusCode != http.StatusNoContent {
		t.Fatalf("unchanged radar poll: %d", res.StatusCode)
	}
	f.app.setStatus(bob, new("acme/shop"), new("feat/one-page-checkout"), new("refunds"))
	res := f.alice.get(poll)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("changed radar poll: %d", res.StatusCode)
	}
	if n := f.alice.doc(res, http.StatusOK).Find(`[data-testid="overlap-warning"]`).Length(); n != 0 {
		t.Fatalf("%d warnings after bob moved to another branch", n)
	}
}

// TestTheSidebarWarnsLive: the session page's live stream sends the
// sidebar with the warning as soon as the second agent's status makes the
// collision.
func TestTheSidebarWarnsLive(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	bob := f.invitedAgent("bob-claude", "Bob")
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	connect, _ := doc.Find(`[sse-connect]`).Attr("sse-connect")
	st := f.alice.openEvents(connect)
	f.app.waitStreams(f.session.ID, 1)
	f.app.setStatus(f.ag, new("https://github.com/Acme/Shop.git"), new("fix/orders-total"), new("rounding"))
	if m := st.next("presence", wait); strings.Contains(m.data, "overlap-warning") {
		t.Fatal("a warning with one agent on the branch")
	}
	f.app.setStatus(bob, new("acme/shop"), new("fix/orders-total"), new("refunds"))
	if m := st.next("presence", wait); !strings.Contains(m.data, `data-testid="overlap-warning"`) || !strings.Contains(m.data, "@bob-claude and @claude-1") {
		t.Fatalf("presence event without the warning:\n%s", m.data)
	}
}
