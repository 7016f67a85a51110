package live

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// Helpers of the broker tests: an in-memory Source, renders that name what
// they render, and a stream reader.

const wait = 5 * time.Second

// The world of the tests: one workspace, one project, one session.
const (
	testWorkspace = 1
	testProject   = 2
	testSession   = 3
)

// fakeSource is a Source over memory; tests change it under mu.
type fakeSource struct {
	mu       sync.Mutex
	notes    []store.Note // of testSession, oldest first
	receipts map[int64][]store.Receipt
	version  string // the presence sidebar's
	unread   []store.SessionUnread
	// wholeCounts counts UnreadMail's calls (an owner's whole workspace).
	wholeCounts int
	denied      map[int64]bool // owners who may no longer see their streams
}

func newSource() *fakeSource {
	return &fakeSource{receipts: map[int64][]store.Receipt{}, version: "v1", denied: map[int64]bool{}}
}

// addNote adds a note of testSession; sender 0 is an agent's note.
func (f *fakeSource) addNote(sender int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := store.Note{ID: int64(len(f.notes) + 1), WorkspaceID: testWorkspace, SessionID: testSession}
	if sender != 0 {
		n.SenderOwnerID = &sender
	}
	f.notes = append(f.notes, n)
	return n.ID
}

func (f *fakeSource) SessionMailAfter(_ context.Context, ws, sid, after int64) ([]store.Note, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.Note // newest first, as the store returns them
	for i := len(f.notes) - 1; i >= 0; i-- {
		if n := f.notes[i]; ws == testWorkspace && sid == testSession && n.ID > after {
			out = append(out, n)
		}
	}
	return out, nil
}

func (f *fakeSource) NoteReceipts(_ context.Context, _, _ int64, ids []int64) ([]store.Receipt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.receipts[ids[0]], nil
}

func (f *fakeSource) SessionMailMarks(context.Context, int64) (int64, store.MailMarks, error) {
	return testWorkspace, store.MailMarks{}, nil
}

func (f *fakeSource) GetProject(_ context.Context, ws, id int64) (*store.Project, error) {
	return &store.Project{ID: id, WorkspaceID: ws}, nil
}

func (f *fakeSource) ListSeatedAgents(context.Context, int64, int64) ([]store.SeatedAgent, error) {
	return nil, nil
}

func (f *fakeSource) UnreadMail(context.Context, int64, int64) ([]store.SessionUnread, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wholeCounts++
	return append([]store.SessionUnread(nil), f.unread...), nil
}

func (f *fakeSource) UnreadMailIn(_ context.Context, owners, sessions []int64) ([]store.OwnerSessionUnread, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.OwnerSessionUnread
	for _, o := range owners {
		for _, u := range f.unread {
			if slices.Contains(sessions, u.SessionID) {
				out = append(out, store.OwnerSessionUnread{OwnerID: o, SessionUnread: u})
			}
		}
	}
	return out, nil
}

func (f *fakeSource) OwnerSees(_ context.Context, owner, _, _ int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.denied[owner], nil
}

// testRender renders what a test can read back: "note 5 own", "receipts 5
// 2", "presence v1".
func testRender(src *fakeSource) Render {
	return Render{
		Note: func(_ time.Time, _ int64, n store.Note, own bool) ([]byte, error) {
			if own {
				return fmt.Appendf(nil, "note %d own", n.ID), nil
			}
			return fmt.Appendf(nil, "note %d new", n.ID), nil
		},
		Receipts: func(_ time.Time, noteID int64, rs []store.Receipt) ([]byte, error) {
			return fmt.Appendf(nil, "receipts %d %d", noteID, len(rs)), nil
		},
		Presence: func(time.Time, int64, store.Project, []store.SeatedAgent) Sidebar {
			src.mu.Lock()
			v := src.version
			src.mu.Unlock()
			return Sidebar{Version: v, HTML: func() ([]byte, error) { return []byte("presence " + v), nil }}
		},
	}
}

// newBroker is a broker over src, connected, closed at cleanup.
func newBroker(t *testing.T, src *fakeSource, o Options) *Broker {
	t.Helper()
	o.Source, o.Render = src, testRender(src)
	b := New(o)
	b.connected(true)
	t.Cleanup(b.Close)
	return b
}

// subscribeTest opens a stream of the owner: of testSession, or (session 0) an
// unread stream.
func (b *Broker) subscribeTest(t *testing.T, owner int64, session int64, signIn int64, presence string) *Stream {
	t.Helper()
	st := b.NewStream(testOwner(owner), session, Client{SignIn: signIn, Addr: "192.0.2.1"}, presence)
	if err := b.Subscribe(st, testProject, 0); err != nil {
		t.Fatal(err)
	}
	return st
}

// next returns the stream's next event, failing after wait.
func next(t *testing.T, st *Stream) Event {
	t.Helper()
	select {
	case ev := <-st.Events():
		return ev
	case <-st.Done():
		t.Fatalf("the stream was closed (%s) while waiting for an event", st.why)
	case <-time.After(wait):
		t.Fatal("no event")
	}
	return Event{}
}

// nextNamed returns the stream's next event named name, skipping others.
func nextNamed(t *testing.T, st *Stream, name string) Event {
	t.Helper()
	for {
		if ev := next(t, st); bytes.HasPrefix(ev.Data, []byte("event: "+name+"\n")) ||
			bytes.Contains(ev.Data, []byte("\nevent: "+name+"\n")) {
			return ev
		}
	}
}

// closed waits for the broker to drop the stream and returns why.
func closed(t *testing.T, st *Stream) string {
	t.Helper()
	select {
	case <-st.Done():
		return st.why
	case <-time.After(wait):
		t.Fatal("the stream is still open")
	}
	return ""
}

// data is an event's data lines.
func data(ev Event) string {
	var out []string
	for _, line := range bytes.Split(ev.Data, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			out = append(out, string(d))
		}
	}
	return fmt.Sprint(out)
}

func testOwner(id int64) *store.Owner { return &store.Owner{ID: id, WorkspaceID: testWorkspace} }
