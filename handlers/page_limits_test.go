package handlers

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
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
