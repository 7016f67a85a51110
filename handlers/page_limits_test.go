package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// TestSearchAndInboxAreLimitedPerSignIn: loads of search and the inbox sent
// at once by one sign-in draw on one bucket; past it each gets 429 with
// Retry-After, while another sign-in's loads are not touched.
func TestSearchAndInboxAreLimitedPerSignIn(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, func(c *Config) { c.PageLimits = PageLimits{PerMinute: 1, Burst: 4} })
	alice := app.owner("alice@example.com", "Alice's")
	bob := app.owner("bob@example.com", "Bob's")
	load := func(c *ownerClient, path string) (int, string, error) {
		res, err := c.http.Get(app.srv.URL + path)
		if err != nil {
			return 0, "", err
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Retry-After"), nil
	}
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range 10 {
		path := "/search?q=deploy+" + strconv.Itoa(i)
		if i%2 == 1 {
			path = "/inbox"
		}
		wg.Go(func() {
			code, retry, err := load(alice, path)
			if err != nil {
				t.Error(err)
				return
			}
			if code == http.StatusTooManyRequests {
				if n, err := strconv.Atoi(retry); err != nil || n < 1 || n > 60 {
					t.Errorf("429 with Retry-After %q", retry)
				}
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusOK] != 4 || codes[http.StatusTooManyRequests] != 6 {
		t.Fatalf("statuses of 10 loads at once: %v; want 4 × 200 and 6 × 429", codes)
	}
	if code, _, err := load(bob, "/search?q=deploy"); err != nil || code != http.StatusOK {
		t.Fatalf("another sign-in's search: %d %v", code, err)
	}
	// Other pages are not limited.
	if code, _, err := load(alice, "/"); err != nil || code != http.StatusOK {
		t.Fatalf("the projects page past the limit: %d %v", code, err)
	}
}

// TestProjectWriteLimits: the project page shows each agent's write limits
// (60 a minute, 20 at once by default) and saves new ones; a value out of
// bounds is refused with its field named, and nothing saved.
func TestProjectWriteLimits(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	page := fmt.Sprintf("/projects/%d", f.p.ID)
	doc := f.alice.doc(f.alice.get(page), http.StatusOK)
	for field, want := range map[string]string{"write_per_minute": "60", "write_burst": "20"} {
		if got := doc.Find(`[data-testid="l-`+field+`"]`).AttrOr("value", ""); got != want {
			t.Errorf("%s shows %q, want %q", field, got, want)
		}
	}
	if res := f.alice.post(page+"/limits", url.Values{"write_per_minute": {"600"}, "write_burst": {"200"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d", res.StatusCode)
	}
	doc = f.alice.doc(f.alice.post(page+"/limits", url.Values{"write_per_minute": {"0"}, "write_burst": {"many"}}), http.StatusUnprocessableEntity)
	if msg := doc.Find(`#write_per_minute-error`).Text(); !strings.Contains(msg, "use 1 to 6000") {
		t.Errorf("refusal of 0 a minute: %q", msg)
	}
	l, err := f.app.store.ProjectWriteLimits(context.Background(), f.p.WorkspaceID, f.p.ID)
	if err != nil || l != (store.WriteLimits{PerMinute: 600, Burst: 200}) {
		t.Fatalf("saved %+v %v", l, err)
	}
}
