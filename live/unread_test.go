package live

import (
	"context"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// TestUnreadCounts: an unread stream gets its owner's counts first, then
// whenever a read mark of theirs moves or a note is posted in the
// workspace, never the same counts twice in a row.
func TestUnreadCounts(t *testing.T) {
	t.Parallel()
	src := newSource()
	src.unread = []store.SessionUnread{{SessionID: testSession, ProjectID: testProject, Unread: 2}}
	b := newBroker(t, src, Options{})
	st := b.subscribeTest(t, 1, 0, 1, "")
	first, err := b.UnreadEvent(context.Background(), testWorkspace, 1)
	if err != nil {
		t.Fatal(err)
	}
	b.FirstUnread(st, first)
	if got, want := data(next(t, st)), `[{"total":2,"projects":{"2":2},"sessions":{"3":2},"inbox":0,"inbox_newest":0}]`; got != want {
		t.Fatalf("first counts %s, want %s", got, want)
	}

	b.readsHeard(1) // unchanged: nothing is sent
	src.mu.Lock()
	src.unread = nil
	src.mu.Unlock()
	b.readsHeard(1)
	if got, want := data(next(t, st)), `[{"total":0,"projects":{},"sessions":{},"inbox":0,"inbox_newest":0}]`; got != want {
		t.Fatalf("after reading %s, want %s", got, want)
	}

	src.mu.Lock()
	src.unread = []store.SessionUnread{{SessionID: testSession, ProjectID: testProject, Unread: 1, Inbox: 1, InboxNewest: 9}}
	src.mu.Unlock()
	b.noteHeard(store.NoteNotice{SessionID: testSession, NoteID: 9})
	if got, want := data(next(t, st)), `[{"total":1,"projects":{"2":1},"sessions":{"3":1},"inbox":1,"inbox_newest":9}]`; got != want {
		t.Fatalf("after a note %s, want %s", got, want)
	}
}

// TestSessionStreamsHearUnread: a session page's stream carries its owner's
// unread counts too (the navigation's inbox count), and the unread streams'
// count leaves it out.
func TestSessionStreamsHearUnread(t *testing.T) {
	t.Parallel()
	src := newSource()
	b := newBroker(t, src, Options{})
	st := b.subscribeTest(t, 1, testSession, 1, "v1")
	other := b.subscribeTest(t, 2, testSession, 2, "v1")
	if n := b.Count(0); n != 0 {
		t.Fatalf("%d unread streams, want 0", n)
	}
	src.mu.Lock()
	src.unread = []store.SessionUnread{{SessionID: testSession, ProjectID: testProject, Unread: 1, Inbox: 1, InboxNewest: 5}}
	src.mu.Unlock()
	b.readsHeard(1)
	if got, want := data(nextNamed(t, st, "unread")), `[{"total":1,"projects":{"2":1},"sessions":{"3":1},"inbox":1,"inbox_newest":5}]`; got != want {
		t.Fatalf("session stream heard %s, want %s", got, want)
	}
	// The other owner's stream heard nothing of it.
	select {
	case ev := <-other.Events():
		t.Fatalf("another owner's stream got %s", ev.Data)
	default:
	}
	b.Unsubscribe(st)
	if n := b.Count(testSession); n != 1 {
		t.Fatalf("%d session streams after leaving, want 1", n)
	}
}

// TestNoteRecountsItsSession: once an owner's counts are taken, a note
// recounts only its own session, for every owner watching, and leaves the
// other sessions' counts as they were; the owner's whole workspace is
// counted again only when their read marks move.
func TestNoteRecountsItsSession(t *testing.T) {
	t.Parallel()
	const otherSession = testSession + 1
	src := newSource()
	src.unread = []store.SessionUnread{{SessionID: testSession, ProjectID: testProject, Unread: 2}, {SessionID: otherSession, ProjectID: testProject, Unread: 1}}
	b := newBroker(t, src, Options{})
	st := b.subscribeTest(t, 1, 0, 1, "")
	b.readsHeard(1)
	if got, want := data(next(t, st)), `[{"total":3,"projects":{"2":3},"sessions":{"3":2,"4":1},"inbox":0,"inbox_newest":0}]`; got != want {
		t.Fatalf("first counts %s, want %s", got, want)
	}
	src.mu.Lock()
	whole := src.wholeCounts
	// Both sessions change; the note is in one of them.
	src.unread = []store.SessionUnread{{SessionID: testSession, ProjectID: testProject, Unread: 5}, {SessionID: otherSession, ProjectID: testProject, Unread: 7}}
	src.mu.Unlock()
	b.noteHeard(store.NoteNotice{SessionID: testSession, NoteID: 9})
	if got, want := data(next(t, st)), `[{"total":6,"projects":{"2":6},"sessions":{"3":5,"4":1},"inbox":0,"inbox_newest":0}]`; got != want {
		t.Fatalf("after a note %s, want %s", got, want)
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.wholeCounts != whole {
		t.Fatalf("a note counted the owner's whole workspace %d times", src.wholeCounts-whole)
	}
}
