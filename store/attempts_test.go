package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestAttemptsConcurrentReserveAtMostTheFreeTries: 40 tries at once for one
// email from one address: exactly the free tries go ahead.
func TestAttemptsConcurrentReserveAtMostTheFreeTries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := st.ReserveAttempt(ctx, store.ActionSignIn, "192.0.2.1", store.AttemptKey{Email: "a@example.com", FreeTries: 5})
			if err != nil {
				t.Error(err)
				return
			}
			if a.Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != 5 {
		t.Fatalf("%d of 40 concurrent tries allowed, want the 5 free ones", allowed)
	}
}

func TestAttemptsSlowDownAndStartOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	db := storetest.SQL(t, st)
	reserve := func(email, addr string) store.Attempt {
		t.Helper()
		a, err := st.ReserveAttempt(ctx, store.ActionSignIn, addr, store.AttemptKey{Email: email, FreeTries: 3}, store.AttemptKey{FreeTries: 5})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for i, want := range []store.Attempt{{Allowed: true, Left: 2}, {Allowed: true, Left: 1}, {Allowed: true, Left: 0, Wait: store.AttemptDelay}} {
		if got := reserve("a@example.com", "192.0.2.1"); got != want {
			t.Fatalf("try %d: %+v, want %+v", i+1, got, want)
		}
	}
	if got := reserve("A@example.com", "192.0.2.1"); got.Allowed || got.Wait != store.AttemptDelay {
		t.Fatalf("fourth try at once: %+v, want refused for %v", got, store.AttemptDelay)
	}
	// Another address is not held up, nor another email from this one
	// until the address's own budget runs out (refused tries count there).
	if got := reserve("a@example.com", "192.0.2.2"); !got.Allowed {
		t.Fatalf("another address: %+v", got)
	}
	if got := reserve("b@example.com", "192.0.2.1"); !got.Allowed || got.Wait != store.AttemptDelay {
		t.Fatalf("another email, the address's fourth try: %+v", got)
	}
	if got := reserve("c@example.com", "192.0.2.1"); got.Allowed {
		t.Fatalf("the address's budget is spent: %+v", got)
	}
	// Once the waits have passed, one more try, and the wait doubles.
	db.Exec(`UPDATE attempts SET next_at = now() - interval '1 second' WHERE remote_addr = '192.0.2.1'`)
	if got := reserve("a@example.com", "192.0.2.1"); !got.Allowed || got.Wait != 2*store.AttemptDelay {
		t.Fatalf("after the wait: %+v", got)
	}
	// A right password gives the address its try back and forgets the email's.
	if err := st.AttemptSucceeded(ctx, store.ActionSignIn, "192.0.2.1", "a@example.com"); err != nil {
		t.Fatal(err)
	}
	var tries int
	db.QueryRow(`SELECT count(*) FROM attempts WHERE email = 'a@example.com' AND remote_addr = '192.0.2.1'`).Scan(&tries)
	if tries != 0 {
		t.Fatal("the email's tries were kept after success")
	}
	// An hour without tries starts over.
	db.Exec(`UPDATE attempts SET next_at = now() - interval '2 hours', last_at = now() - interval '61 minutes'`)
	if got := reserve("b@example.com", "192.0.2.1"); !got.Allowed || got.Left != 2 {
		t.Fatalf("after a quiet hour: %+v", got)
	}
	// The delay stops growing at its ceiling.
	db.Exec(`UPDATE attempts SET tries = 40, next_at = now() - interval '1 second' WHERE email = 'b@example.com'`)
	if got := reserve("b@example.com", "192.0.2.1"); !got.Allowed || got.Wait != store.AttemptMaxDelay {
		t.Fatalf("at the ceiling: %+v", got)
	}
}

// TestAttemptsSignInsAtOnceNeverDeadlock: owners signing in at once from one
// address, each a try reserved on its email and the address, then given
// back: the two statements take the rows in the same order, so none is
// refused by a deadlock.
func TestAttemptsSignInsAtOnceNeverDeadlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	keys := []store.AttemptKey{{Email: "a@example.com", FreeTries: 1000}, {FreeTries: 1000}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				if _, err := st.ReserveAttempt(ctx, store.ActionSignIn, "192.0.2.9", keys...); err != nil {
					t.Error(err)
					return
				}
				if err := st.AttemptSucceeded(ctx, store.ActionSignIn, "192.0.2.9", "a@example.com"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
