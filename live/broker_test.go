package live

import (
	"bytes"
	"testing"
	"time"
)

// TestDisconnectClosesStreamsAndRefusesNew: while the listener is
// disconnected, notifications are lost: every stream is closed and new ones
// are refused until it is connected again.
func TestDisconnectClosesStreamsAndRefusesNew(t *testing.T) {
	t.Parallel()
	b := newBroker(t, newSource(), Options{})
	session := b.subscribeTest(t, 1, testSession, 1, "v1")
	unread := b.subscribeTest(t, 1, 0, 1, "")
	b.connected(false)
	for _, st := range []*Stream{session, unread} {
		if why := closed(t, st); why != closeDown {
			t.Fatalf("closed for %q, want %q", why, closeDown)
		}
	}
	if err := b.Subscribe(b.NewStream(testOwner(1), testSession, Client{SignIn: 1}, "v1"), testProject, 0); err != ErrDown {
		t.Fatalf("subscribe while disconnected: %v, want ErrDown", err)
	}
	b.connected(true)
	b.subscribeTest(t, 1, testSession, 1, "v1")
	if n := b.Open(); n != 1 {
		t.Fatalf("%d streams open, want 1", n)
	}
}

// TestSignOutClosesThatSignInsStreams: a sign-out ends every stream of that
// sign-in, as signed out; another sign-in's stay open.
func TestSignOutClosesThatSignInsStreams(t *testing.T) {
	t.Parallel()
	b := newBroker(t, newSource(), Options{})
	mine := []*Stream{b.subscribeTest(t, 1, testSession, 1, "v1"), b.subscribeTest(t, 1, 0, 1, "")}
	theirs := b.subscribeTest(t, 1, testSession, 2, "v1")
	b.signedOut(1)
	for _, st := range mine {
		closed(t, st)
		if !st.SignedOut() {
			t.Fatalf("closed for %q, want sign-out", st.why)
		}
	}
	if b.Count(testSession) != 1 || b.Count(0) != 0 {
		t.Fatalf("%d session streams and %d unread streams, want the other sign-in's only", b.Count(testSession), b.Count(0))
	}
	select {
	case <-theirs.Done():
		t.Fatal("the other sign-in's stream was closed")
	default:
	}
}

// TestCloseEndsStreamsAndRefusesNew: at shutdown every stream ends and new
// ones are refused.
func TestCloseEndsStreamsAndRefusesNew(t *testing.T) {
	t.Parallel()
	b := newBroker(t, newSource(), Options{})
	st := b.subscribeTest(t, 1, testSession, 1, "v1")
	b.Close()
	if why := closed(t, st); why != closeShutdown || st.SignedOut() {
		t.Fatalf("closed for %q, want shutdown", why)
	}
	if err := b.Subscribe(b.NewStream(testOwner(1), 0, Client{SignIn: 1}, ""), 0, 0); err != ErrDown {
		t.Fatalf("subscribe after close: %v, want ErrDown", err)
	}
}

// TestHeartbeatAndRecheck: every heartbeat re-checks each stream's right to
// stay open, closes those whose owner may no longer see what they stream and
// sends the others a comment line.
func TestHeartbeatAndRecheck(t *testing.T) {
	t.Parallel()
	src := newSource()
	b := newBroker(t, src, Options{Heartbeat: 50 * time.Millisecond})
	kept := b.subscribeTest(t, 1, testSession, 1, "v1")
	gone := b.subscribeTest(t, 2, testSession, 2, "v1")
	for range 2 {
		if ev := next(t, kept); !bytes.Equal(ev.Data, Heartbeat) {
			t.Fatalf("event %q, want a heartbeat", ev.Data)
		}
	}
	src.mu.Lock()
	src.denied[2] = true
	src.mu.Unlock()
	if why := closed(t, gone); why != closeForbidden {
		t.Fatalf("closed for %q, want %q", why, closeForbidden)
	}
	if ev := next(t, kept); !bytes.Equal(ev.Data, Heartbeat) {
		t.Fatalf("event %q, want a heartbeat", ev.Data)
	}
}

// TestFrame: the framing of an event, line breaks of every kind in its data
// included.
func TestFrame(t *testing.T) {
	for _, c := range []struct {
		name string
		id   int64
		data string
		want string
	}{
		{"note", 42, "<li>a\r\nb\rc\nd</li>", "id: 42\nevent: note\ndata: <li>a\ndata: b\ndata: c\ndata: d</li>\n\n"},
		{"signout", 0, "", "event: signout\ndata: \n\n"},
	} {
		if got := string(Frame(c.name, c.id, []byte(c.data))); got != c.want {
			t.Errorf("Frame(%q, %d, %q) = %q, want %q", c.name, c.id, c.data, got, c.want)
		}
	}
}

// TestLimitsCloseTheOldestAndRefuseTheAddress: past its limit a sign-in
// (then an owner) has its oldest stream closed as replaced; an address at
// its limit is refused new streams, and one stream ending makes room.
func TestLimitsCloseTheOldestAndRefuseTheAddress(t *testing.T) {
	t.Parallel()
	b := newBroker(t, newSource(), Options{Limits: Limits{PerSignIn: 2, PerOwner: 3, PerAddress: 4}})
	open := func(owner, signIn int64, addr string) (*Stream, error) {
		st := b.NewStream(testOwner(owner), testSession, Client{SignIn: signIn, Addr: addr}, "v1")
		return st, b.Subscribe(st, testProject, 0)
	}
	a1, _ := open(1, 1, "192.0.2.1")
	a2, _ := open(1, 1, "192.0.2.1")
	a3, _ := open(1, 1, "192.0.2.1")
	if closed(t, a1); !a1.Replaced() {
		t.Fatalf("the sign-in's oldest closed for %q, want replaced", a1.why)
	}
	// A second sign-in of the same owner: the owner's oldest goes.
	b1, _ := open(1, 2, "192.0.2.2")
	b2, _ := open(1, 2, "192.0.2.2")
	if closed(t, a2); !a2.Replaced() {
		t.Fatalf("the owner's oldest closed for %q, want replaced", a2.why)
	}
	for _, st := range []*Stream{a3, b1, b2} {
		select {
		case <-st.Done():
			t.Fatalf("a newer stream was closed (%s)", st.why)
		default:
		}
	}
	// Other owners from one address: refused at its limit, not closed.
	c1, _ := open(2, 3, "192.0.2.9")
	open(3, 4, "192.0.2.9")
	open(4, 5, "192.0.2.9")
	open(5, 6, "192.0.2.9")
	if _, err := open(6, 7, "192.0.2.9"); err != ErrTooMany {
		t.Fatalf("fifth stream from one address: %v, want ErrTooMany", err)
	}
	b.Unsubscribe(c1)
	if _, err := open(6, 7, "192.0.2.9"); err != nil {
		t.Fatalf("after one left: %v", err)
	}
	if n := b.Open(); n != 7 {
		t.Fatalf("%d streams open, want 7", n)
	}
}
