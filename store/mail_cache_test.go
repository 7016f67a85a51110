package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestEmailCache: the cache vouches only for the sessions it follows, while
// its listener is connected, and reloads them when it connects again.
func TestEmailCache(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	l, cache := quietListener(f.st)
	stop := startListener(l)
	defer func() { stop() }()

	ws := f.owner.WorkspaceID
	if _, ok := cache.NewestNote(ws, f.sess.ID); ok {
		t.Fatal("the cache vouches for a session before it is running and following it")
	}
	<-l.Ready()
	if _, err := cache.Follow(ctx, ws+1, f.sess.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("track in another workspace: %v", err)
	}
	if _, ok := cache.NewestNote(ws+1, f.sess.ID); ok {
		t.Fatal("another workspace's session is vouched for")
	}
	first := f.agentNote(t, "first")
	latest, err := cache.Follow(ctx, ws, f.sess.ID)
	if err != nil || latest != first {
		t.Fatalf("track: %d %v", latest, err)
	}
	waitLatest := func(want int64) {
		t.Helper()
		for i := 0; i < 500; i++ {
			if got, ok := cache.NewestNote(ws, f.sess.ID); ok && got == want {
				return
			}
			sleep()
		}
		got, ok := cache.NewestNote(ws, f.sess.ID)
		t.Fatalf("latest %d (%v), want %d", got, ok, want)
	}
	waitLatest(first)
	second := f.agentNote(t, "second")
	waitLatest(second)

	// Cut the listening connection; a note posted meanwhile is not announced
	// to it, and the reload after reconnecting finds it.
	db := storetest.SQL(t, f.st)
	var pid int
	for i := 0; i < 500 && pid == 0; i++ {
		_ = db.QueryRow(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, store.ListenerApplicationName).Scan(&pid)
		if pid == 0 {
			sleep()
		}
	}
	if pid == 0 {
		t.Fatal("no listening connection found")
	}
	db.Exec(`SELECT pg_terminate_backend($1)`, pid)
	third := f.agentNote(t, "third")
	waitLatest(third)

	// Deterministically: stop the listener, post while nobody listens, run it
	// again: the reload on connect finds the note it was never told about.
	stop()
	if _, ok := cache.NewestNote(ws, f.sess.ID); ok {
		t.Fatal("a stopped listener's cache still vouches for sessions")
	}
	fourth := f.agentNote(t, "fourth")
	stop = startListener(l)
	waitLatest(fourth)
}

// TestSweepFindsUnannouncedNotes: a note committed without its
// notification (its writer died between the commit and notifyAfterCommit)
// reaches the cache's NewestNote and the listener's NoteTopic subscribers by
// the cache's sweep.
func TestSweepFindsUnannouncedNotes(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	l, cache := quietListener(f.st)
	store.SetSweepEvery(cache, 50*time.Millisecond)
	h := hear(l)
	t.Cleanup(startListener(l))
	<-l.Ready()
	before, err := cache.Follow(ctx, ws, f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}

	var id int64
	if err := storetest.SQL(t, f.st).QueryRow(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, message_type, subject, body)
		VALUES ($1, $2, 'owner', $3::bigint, owner_slug($3::bigint), 'Owner', 'analysis', 's', 'b') RETURNING id`,
		ws, f.sess.ID, f.owner.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id <= before {
		t.Fatalf("new note %d, newest before %d", id, before)
	}
	h.waitFor(t, fmt.Sprintf("%s %d:%d", store.NotesChannel, f.sess.ID, id))
	if got, sure := cache.NewestNote(ws, f.sess.ID); !sure || got != id {
		t.Fatalf("NewestNote = %d, %v; want %d, true", got, sure, id)
	}
}
