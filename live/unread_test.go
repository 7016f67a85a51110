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
	if got, want := data(next(t, st)), `[{"total":2,"projects":{"2":2},"sessions":{"3":2}}]`; got != want {
		t.Fatalf("first counts %s, want %s", got, want)
	}

	b.readsHeard(1) // unchanged: nothing is sent
	src.mu.Lock()
	src.unread = nil
	src.mu.Unlock()
	b.readsHeard(1)
	if got, want := data(next(t, st)), `[{"total":0,"projects":{},"sessions":{}}]`; got != want {
		t.Fatalf("after reading %s, want %s", got, want)
	}

	src.mu.Lock()
	src.unread = []store.SessionUnread{{SessionID: testSession, ProjectID: testProject, Unread: 1}}
	src.mu.Unlock()
	b.noteHeard(store.NoteNotice{SessionID: testSession, NoteID: 9})
	if got, want := data(next(t, st)), `[{"total":1,"projects":{"2":1},"sessions":{"3":1}}]`; got != want {
		t.Fatalf("after a note %s, want %s", got, want)
	}
}
