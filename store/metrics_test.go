package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestStatementCounts: every statement through the pool is counted once,
// BEGIN and COMMIT included, as background work under store.Background and
// as request work otherwise.
func TestStatementCounts(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	before := st.StatementCounts()
	if err := st.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if n := st.StatementCounts(); n != before {
		t.Fatalf("a ping counted as a statement: %+v, before %+v", n, before)
	}
	if _, err := st.CreateOwner(ctx, store.NewOwner{Email: "o@example.com", DisplayName: "O", Password: "long enough password"}); err != nil {
		t.Fatal(err)
	}
	mid := st.StatementCounts()
	if mid.Request <= before.Request || mid.Background != before.Background {
		t.Fatalf("after a request's work: %+v, before %+v", mid, before)
	}
	if _, err := st.WebhookOutboxDepth(store.Background(ctx)); err != nil {
		t.Fatal(err)
	}
	after := st.StatementCounts()
	if after.Background != mid.Background+1 || after.Request != mid.Request {
		t.Fatalf("after one background statement: %+v, before %+v", after, mid)
	}
}

// TestEmailCacheStateAndNoteTime: the cache says whether it is current and
// how many sessions it follows, and a note notification carries the time it
// was sent (from which replicas measure its lag); a payload without one (an
// older replica's) still moves the newest id, with a zero time.
func TestEmailCacheStateAndNoteTime(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	l, cache := quietListener(f.st)
	lags := make(chan time.Duration, 10)
	store.Listen(l, store.NoteTopic, func(n store.NoteNotice) {
		if !n.Sent.IsZero() {
			lags <- max(time.Since(n.Sent), 0)
		}
	})
	if s := cache.State(); s.Current || s.Sessions != 0 {
		t.Fatalf("before Run: %+v", s)
	}
	stop := startListener(l)
	<-l.Ready()
	ws := f.owner.WorkspaceID
	if _, err := cache.Follow(ctx, ws, f.sess.ID); err != nil {
		t.Fatal(err)
	}
	if s := cache.State(); !s.Current || s.Sessions != 1 {
		t.Fatalf("current, one session followed: %+v", s)
	}

	posted := time.Now()
	id := f.agentNote(t, "timed")
	select {
	case d := <-lags:
		if d < 0 || d > time.Since(posted) {
			t.Fatalf("lag %v, not within the %v since posting", d, time.Since(posted))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no lag observed within 10 s")
	}

	storetest.SQL(t, f.st).Exec(`SELECT pg_notify($1, $2)`, store.NotesChannel, fmt.Sprintf("%d:%d", f.sess.ID, id+1000))
	for i := 0; i < 500; i++ {
		if got, _ := cache.NewestNote(ws, f.sess.ID); got == id+1000 {
			break
		}
		sleep()
	}
	if got, ok := cache.NewestNote(ws, f.sess.ID); !ok || got != id+1000 {
		t.Fatalf("a payload without a time: latest %d %v", got, ok)
	}
	select {
	case d := <-lags:
		t.Fatalf("a payload without a time measured a lag of %v", d)
	default:
	}

	stop()
	if s := cache.State(); s.Current {
		t.Fatalf("a stopped listener's cache says it is current: %+v", s)
	}
}
