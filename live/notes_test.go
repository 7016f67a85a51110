package live

import (
	"fmt"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// TestNotesInOrderOnceEach: notifications go out after each note's commit,
// so two notes of a session may be heard newest first, or twice; every
// stream of the session still gets each note once, oldest first, its
// sender the own row and everyone else the new one.
func TestNotesInOrderOnceEach(t *testing.T) {
	t.Parallel()
	src := newSource()
	b := newBroker(t, src, Options{})
	alice := b.subscribeTest(t, 1, testSession, 1, "v1")
	carol := b.subscribeTest(t, 2, testSession, 3, "v1")

	first, second := src.addNote(0), src.addNote(1)
	b.noteHeard(store.NoteNotice{SessionID: testSession, NoteID: second})
	b.noteHeard(store.NoteNotice{SessionID: testSession, NoteID: first})
	b.noteHeard(store.NoteNotice{SessionID: testSession, NoteID: second})
	for _, c := range []struct {
		st   *Stream
		want []string
	}{
		{alice, []string{fmt.Sprintf("[note %d new]", first), fmt.Sprintf("[note %d own]", second)}},
		{carol, []string{fmt.Sprintf("[note %d new]", first), fmt.Sprintf("[note %d new]", second)}},
	} {
		for i, want := range c.want {
			ev := nextNamed(t, c.st, "note")
			if got := data(ev); got != want || ev.NoteID != int64(i+1) {
				t.Fatalf("event %d: %s (note %d), want %s", i, got, ev.NoteID, want)
			}
		}
	}
	// The repeated notification sent nothing more: the next event is the next note's.
	third := src.addNote(0)
	b.noteHeard(store.NoteNotice{SessionID: testSession, NoteID: third})
	if ev := nextNamed(t, carol, "note"); ev.NoteID != third {
		t.Fatalf("after the repeat: note %d, want %d", ev.NoteID, third)
	}
}

// TestFullBufferClosesOnlyThatStream: a stream that is not read fills its
// bounded buffer and is closed; a stream read alongside gets every note.
func TestFullBufferClosesOnlyThatStream(t *testing.T) {
	t.Parallel()
	src := newSource()
	b := newBroker(t, src, Options{Buffer: 8})
	slow := b.subscribeTest(t, 1, testSession, 4, "v1")
	fast := b.subscribeTest(t, 2, testSession, 5, "v1")
	for i := range 9 {
		id := src.addNote(0)
		b.noteHeard(store.NoteNotice{SessionID: testSession, NoteID: id})
		if ev := nextNamed(t, fast, "note"); ev.NoteID != id {
			t.Fatalf("fast stream, note %d: got %d", i, ev.NoteID)
		}
	}
	if why := closed(t, slow); why != closeOverflow {
		t.Fatalf("slow stream closed for %q, want overflow", why)
	}
	if n := b.Count(testSession); n != 1 {
		t.Fatalf("%d streams, want the fast one", n)
	}
}

// TestTooManyNewNotesCloseTheSession: more new notes than a reconnect
// replays close the session's streams, which replay from the database.
func TestTooManyNewNotesCloseTheSession(t *testing.T) {
	t.Parallel()
	src := newSource()
	b := newBroker(t, src, Options{Buffer: 2 * MaxReplay})
	st := b.subscribeTest(t, 1, testSession, 1, "v1")
	for range MaxReplay + 1 {
		src.addNote(0)
	}
	b.noteHeard(store.NoteNotice{SessionID: testSession, NoteID: MaxReplay + 1})
	if why := closed(t, st); why != closeBehind {
		t.Fatalf("closed for %q, want behind", why)
	}
}

// TestReceiptEvent: a receipt on a watched session's note sends the note's
// receipts line; one on another session's is not loaded.
func TestReceiptEvent(t *testing.T) {
	t.Parallel()
	src := newSource()
	src.receipts[7] = []store.Receipt{{NoteID: 7, Reader: "Claude"}}
	b := newBroker(t, src, Options{})
	st := b.subscribeTest(t, 1, testSession, 1, "v1")
	b.receiptHeard(store.NoteRef{SessionID: testSession + 1, NoteID: 8})
	b.receiptHeard(store.NoteRef{SessionID: testSession, NoteID: 7})
	if ev := nextNamed(t, st, "receipt"); data(ev) != "[receipts 7 1]" || ev.NoteID != 0 {
		t.Fatalf("receipt event %q (note %d)", data(ev), ev.NoteID)
	}
}
