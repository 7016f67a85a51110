package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// heard records what a listener passes on: its state changes and, as
// "channel payload", every notification of the live topics (a note's
// without the time it was sent).
type heard struct {
	mu    sync.Mutex
	live  []bool
	notes []string // "channel payload"
	ch    chan struct{}
}

// hear subscribes a new heard to l's live topics and its state.
func hear(l *store.Listener) *heard {
	h := &heard{ch: make(chan struct{}, 1)}
	store.Listen(l, store.NoteTopic, func(n store.NoteNotice) { h.add(store.NotesChannel, fmt.Sprintf("%d:%d", n.SessionID, n.NoteID)) })
	store.Listen(l, store.ReceiptTopic, func(r store.NoteRef) { h.add(store.ReceiptsChannel, fmt.Sprintf("%d:%d", r.SessionID, r.NoteID)) })
	store.Listen(l, store.ReadsTopic, func(owner int64) { h.add(store.ReadsChannel, fmt.Sprint(owner)) })
	store.Listen(l, store.PresenceTopic, func(ws int64) { h.add(store.PresenceChannel, fmt.Sprint(ws)) })
	store.Listen(l, store.SignOutTopic, func(id int64) { h.add(store.SignOutChannel, fmt.Sprint(id)) })
	l.Watch(func(connected bool) {
		h.mu.Lock()
		h.live = append(h.live, connected)
		h.mu.Unlock()
		h.poke()
	})
	return h
}

func (h *heard) add(channel, payload string) {
	h.mu.Lock()
	h.notes = append(h.notes, channel+" "+payload)
	h.mu.Unlock()
	h.poke()
}

func (h *heard) poke() {
	select {
	case h.ch <- struct{}{}:
	default:
	}
}

// waitFor waits (at most 5 s) until want was heard, and forgets what was
// heard up to then.
func (h *heard) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		h.mu.Lock()
		for i, n := range h.notes {
			if n == want {
				h.notes = h.notes[i+1:]
				h.mu.Unlock()
				return
			}
		}
		got := fmt.Sprint(h.notes)
		h.mu.Unlock()
		select {
		case <-h.ch:
		case <-deadline:
			t.Fatalf("never heard %q; heard %s", want, got)
		}
	}
}

// none fails when anything was heard on channel since the last waitFor.
func (h *heard) none(t *testing.T, channel string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.notes {
		if len(n) > len(channel) && n[:len(channel)+1] == channel+" " {
			t.Fatalf("heard %q, want nothing on %s", n, channel)
		}
	}
}

// TestListenerHearsLiveTopics: the writes that change what owners see live
// notify on the listener's topics, ids only, and the listener passes them on.
func TestListenerHearsLiveTopics(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	l, _ := quietListener(f.st)
	h := hear(l)
	t.Cleanup(startListener(l))
	<-l.Ready()

	h.mu.Lock()
	if len(h.live) != 2 || h.live[0] || !h.live[1] {
		t.Fatalf("live changes %v, want [false true] (at Watch, before Run, then connected)", h.live)
	}
	h.mu.Unlock()

	wsText := fmt.Sprint(ws)
	task := "Writing tests"
	if _, err := f.st.SetStatus(ctx, ws, f.connID, store.StatusUpdate{Task: store.StatusField{Set: true, Value: &task}}); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, store.PresenceChannel+" "+wsText)
	if _, err := f.st.ClaimProfile(ctx, ws, f.connID, "ada", "Ada Lovelace"); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, store.PresenceChannel+" "+wsText)

	n, _, err := f.st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: ws, ConnectionID: f.connID, SessionType: f.sess.Type,
		SessionID: f.sess.PublicID, Subject: "s", Body: "b", IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, fmt.Sprintf("%s %d:%d", store.NotesChannel, f.sess.ID, n.ID))

	// A read mark that moves says so; one that does not, does not.
	if _, err := f.st.MarkMailRead(ctx, f.owner.ID, f.sess.ID, n.ID); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, fmt.Sprintf("%s %d", store.ReadsChannel, f.owner.ID))
	if _, err := f.st.MarkMailRead(ctx, f.owner.ID, f.sess.ID, n.ID); err != nil {
		t.Fatal(err)
	}

	// A sign-in that ends says so.
	_, si, err := f.st.CreateSignIn(ctx, f.owner, "127.0.0.1", "Test browser")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.EndSignIn(ctx, store.Actor{OwnerID: f.owner.ID, WorkspaceID: f.owner.WorkspaceID}, si.ID); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, fmt.Sprintf("%s %d", store.SignOutChannel, si.ID))
	h.none(t, store.ReadsChannel) // the unmoved mark, sent before the sign-out, was not heard

	// The agent reads an owner's note: its receipt is announced.
	on, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws, SessionID: f.sess.ID, OwnerID: f.owner.ID,
		Type: store.MessageNote, Subject: "s", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.st.ReadAgentMail(ctx, ws, f.connID, f.sess.Type, f.sess.PublicID, 0, 10); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, fmt.Sprintf("%s %d:%d", store.ReceiptsChannel, f.sess.ID, on.ID))

	if err := f.st.RevokeConnection(ctx, ws, f.connID); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, store.PresenceChannel+" "+wsText)

	// The listening connection dies: its watchers hear it go down, then
	// come back.
	storetest.SQL(t, f.st).Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
		store.ListenerApplicationName)
	deadline := time.After(10 * time.Second)
	for {
		h.mu.Lock()
		l := fmt.Sprint(h.live)
		h.mu.Unlock()
		if l == "[false true false true]" {
			break
		}
		select {
		case <-h.ch:
		case <-deadline:
			t.Fatalf("live changes %s, want [false true false true]", l)
		}
	}
}
