package live

import "testing"

// TestPresenceOnlyWhenItChanged: a stream whose page shows the current
// sidebar gets none on connect; a presence notification that changes the
// sidebar sends it, and a stream connecting later with an older version
// gets the current one at once.
func TestPresenceOnlyWhenItChanged(t *testing.T) {
	t.Parallel()
	src := newSource()
	b := newBroker(t, src, Options{})
	st := b.subscribeTest(t, 1, testSession, 1, "v1")
	src.mu.Lock()
	src.version = "v2"
	src.mu.Unlock()
	b.presenceHeard(testWorkspace)
	// Had the first look sent v1, it would come first.
	if got := data(next(t, st)); got != "[presence v2]" {
		t.Fatalf("first event %s, want presence v2", got)
	}
	late := b.subscribeTest(t, 2, testSession, 2, "v1")
	if got := data(next(t, late)); got != "[presence v2]" {
		t.Fatalf("a later stream's first event %s, want presence v2", got)
	}
}
