package views

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestUnreadShownStopsAt99Plus: a count at the store's cap reads "99+", on
// a badge and in the tab title; below it, the number.
func TestUnreadShownStopsAt99Plus(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0", 7: "7", 99: "99", 100: "99+", 250: "99+"} {
		if got := unreadShown(n); got != want {
			t.Errorf("unreadShown(%d) = %q, want %q", n, got, want)
		}
	}
	var b bytes.Buffer
	if err := unreadBadge("session", 3, 100).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ">99+ unread<") {
		t.Fatalf("badge %s", b.String())
	}
	if got := pageTitle(&Page{Title: "P", Unread: 100}); got != "(99+) P — osFoundry" {
		t.Fatalf("title %q", got)
	}
}
