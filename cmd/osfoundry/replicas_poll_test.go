package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestNotePostedOnOneReplicaReachesPollOnAnother: an agent posts through
// replica A; the owner's poll, served by replica B, returns the row within one
// poll cycle (LISTEN/NOTIFY keeps B's in-memory latest ids current), and the
// unchanged-poll fast path answers 204 on both before and after.
func TestNotePostedOnOneReplicaReachesPollOnAnother(t *testing.T) {
	t.Parallel()
	rp := startReplicaPair(t, 1, startReplica) // no proxy: the test calls each replica itself
	a, b, w := rp.a, rp.b, rp.w

	owner := newOwnerBrowser(t, b.URL, w)
	owner.signIn()
	get := func(u string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if strings.Contains(u, "/mail/poll") {
			req.Header.Set("HX-Request", "true") // as htmx sends it: the rows alone
		}
		res, err := owner.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	if code, _ := get(fmt.Sprintf("%s/sessions/%d", b.URL, w.session.ID)); code != http.StatusOK {
		t.Fatalf("session page on B: %d", code)
	}
	poll := func(r *replica, after int64) (int, string) {
		return get(fmt.Sprintf("%s/sessions/%d/mail/poll?after=%d", r.URL, w.session.ID, after))
	}
	for _, r := range []*replica{a, b} {
		if code, body := poll(r, 0); code != http.StatusNoContent {
			t.Fatalf("unchanged poll on %s: %d %s", r.URL, code, body)
		}
	}

	posted, err := callTool(a.URL, w.tokens[0], "post_session_note", w.note("Across replicas", "Posted through A", "across-1"))
	if err != nil || posted.isError {
		t.Fatalf("post via A: %v %+v", err, posted)
	}
	id := int64(posted.data["id"].(float64))

	// Within one 5 s poll cycle, bounded: 50 polls 100 ms apart.
	var body string
	seen := false
	for range 50 {
		var code int
		code, body = poll(b, 0)
		if code == http.StatusOK {
			seen = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !seen || strings.Count(body, fmt.Sprintf(`id="note-%d"`, id)) != 1 || strings.Contains(body, "<html") {
		t.Fatalf("B's poll never returned the note posted via A within 5 s (seen=%v): %s", seen, body)
	}
	for _, r := range []*replica{a, b} {
		if code, body := poll(r, id); code != http.StatusNoContent {
			t.Fatalf("poll after the newest id on %s: %d %s", r.URL, code, body)
		}
	}
}
