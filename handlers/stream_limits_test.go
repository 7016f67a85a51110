package handlers

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/live"
)

// TestStreamsPerSignInAndOwnerCloseTheOldest: past the streams one sign-in
// may hold, its oldest ends with a replaced event; past the owner's, the
// owner's oldest does, whichever browser holds it.
func TestStreamsPerSignInAndOwnerCloseTheOldest(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, func(c *Config) { c.StreamLimits = live.Limits{PerSignIn: 2, PerOwner: 3, PerAddress: 100} })
	a := app.owner("alice@example.com", "")
	p := a.project("Site")
	session := a.session(p, "Week")
	url := fmt.Sprintf("/sessions/%d/stream", session.ID)
	a1 := a.openEvents(url)
	a2 := a.openEvents(url)
	app.waitStreams(session.ID, 2)
	a3 := a.openEvents(url)
	if got := a1.ends(wait); len(got) == 0 || got[len(got)-1].name != "replaced" {
		t.Fatalf("the sign-in's oldest stream ended with %+v, want replaced", got)
	}
	app.waitStreams(session.ID, 2)
	b := app.signInAgain(a, "127.0.0.2", "Second browser")
	b.openEvents(url)
	app.waitStreams(session.ID, 3)
	b.openEvents("/unread/stream")
	if got := a2.ends(wait); len(got) == 0 || got[len(got)-1].name != "replaced" {
		t.Fatalf("the owner's oldest stream ended with %+v, want replaced", got)
	}
	if n := app.h.live.Open(); n != 3 {
		t.Fatalf("%d streams open, want the owner's 3", n)
	}
	_ = a3
}

// TestStreamsPerAddressAreRefused: an address holding as many streams as it
// may is refused another with 429 and a sentence that says why; a stream
// that ends makes room.
func TestStreamsPerAddressAreRefused(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, func(c *Config) { c.StreamLimits = live.Limits{PerSignIn: 100, PerOwner: 100, PerAddress: 3} })
	a := app.owner("alice@example.com", "")
	p := a.project("Site")
	session := a.session(p, "Week")
	url := fmt.Sprintf("/sessions/%d/stream", session.ID)
	first := a.openEvents(url)
	a.openEvents(url)
	a.openEvents("/unread/stream")
	app.waitStreams(session.ID, 2)
	s, res := a.tryEvents(url)
	if s != nil {
		t.Fatal("a fourth stream from one address was accepted")
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "Too many live pages are open from your address") {
		t.Fatalf("fourth stream: %d %s", res.StatusCode, truncate(string(body)))
	}
	// Another address is not held up.
	b := app.signInAgain(a, "127.0.0.2", "Second browser")
	b.openEvents(url)
	first.close()
	app.waitStreams(session.ID, 2)
	a.openEvents(url)
}
