package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// claim claims with a long lease and returns "endpoint:note" of each.
func (f *hookFixture) claim(t *testing.T, limit int) []store.DueWebhook {
	t.Helper()
	due, err := f.st.ClaimWebhookDeliveries(context.Background(), limit, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	return due
}

func noteIDs(due []store.DueWebhook) []int64 {
	var out []int64
	for _, d := range due {
		if d.Note != nil {
			out = append(out, d.Note.ID)
		} else {
			out = append(out, 0)
		}
	}
	return out
}

func TestClaimTakesEachEndpointsOldestDeliveryOnly(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	a := f.endpoint(t, f.project, store.WebhookJSON, store.FiresAgents)
	b := f.endpoint(t, f.project, store.WebhookSlack, store.FiresAgents)
	n1, n2, n3 := f.agentNote(t, "one"), f.agentNote(t, "two"), f.agentNote(t, "three")

	due := f.claim(t, 10)
	if got := noteIDs(due); !slices.Equal(got, []int64{n1, n1}) {
		t.Fatalf("first claim: notes %v, want note %d once per endpoint", got, n1)
	}
	for _, d := range due {
		if d.Attempt != 1 || d.Note.Subject != "one" || d.Session.PublicID != f.sess.PublicID || d.ProjectName != "P" || len(d.Secret) != 32 {
			t.Fatalf("claimed %+v", d)
		}
	}
	if again := f.claim(t, 10); len(again) != 0 {
		t.Fatalf("claimed %v while each endpoint had one in flight", noteIDs(again))
	}
	byEndpoint := map[int64]store.DueWebhook{due[0].EndpointID: due[0], due[1].EndpointID: due[1]}

	// a's first is delivered: its second is next; b's first is retried after a
	// wait: nothing of b moves until it is due again.
	if ok, err := f.st.FinishWebhookAttempt(ctx, byEndpoint[a.ID].ID, 1, store.WebhookAttempt{State: store.DeliveryDelivered, ResponseCode: 204}); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if ok, err := f.st.FinishWebhookAttempt(ctx, byEndpoint[b.ID].ID, 1, store.WebhookAttempt{State: store.DeliveryPending, RetryIn: time.Hour, ResponseCode: 503, Error: "HTTP 503"}); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if got := noteIDs(f.claim(t, 10)); !slices.Equal(got, []int64{n2}) {
		t.Fatalf("after a delivered and b waiting: %v, want [%d] for a only", got, n2)
	}
	// A second result of an attempt already recorded is refused.
	if ok, err := f.st.FinishWebhookAttempt(ctx, byEndpoint[b.ID].ID, 1, store.WebhookAttempt{State: store.DeliveryDelivered}); ok || err != nil {
		t.Fatalf("stale attempt recorded: %v %v", ok, err)
	}
	// b's retry comes due: the same delivery, attempt 2.
	f.sql.Exec(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1`, byEndpoint[b.ID].ID)
	retried := f.claim(t, 10)
	if len(retried) != 1 || retried[0].ID != byEndpoint[b.ID].ID || retried[0].Attempt != 2 {
		t.Fatalf("retry claim: %+v", retried)
	}
	// A failed delivery does not block the ones behind it.
	if ok, err := f.st.FinishWebhookAttempt(ctx, retried[0].ID, 2, store.WebhookAttempt{State: store.DeliveryFailed, ResponseCode: 410, Error: "HTTP 410"}); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if got := noteIDs(f.claim(t, 10)); !slices.Equal(got, []int64{n2}) {
		t.Fatalf("after b's first failed: %v, want b's note %d", got, n2)
	}
	log, err := f.st.ListWebhookDeliveries(ctx, f.owner.WorkspaceID, f.project, b.ID)
	if err != nil || len(log) != 3 {
		t.Fatalf("log: %v %v", log, err)
	}
	first := log[2]
	if first.State != store.DeliveryFailed || first.Attempts != 2 || first.ResponseCode == nil || *first.ResponseCode != 410 ||
		first.LastError != "HTTP 410" || first.FinishedAt == nil || first.NoteSubject != "one" || first.SessionTitle != "S" {
		t.Fatalf("log row of the failed delivery: %+v", first)
	}
	if log[1].State != store.DeliveryPending || !log[1].InFlight || log[0].NoteSubject != "three" || *log[0].NoteID != n3 {
		t.Fatalf("log rows: %+v", log[:2])
	}

	// Disabled endpoints are not claimed; their deliveries wait.
	if err := f.st.SetWebhookEndpointEnabled(ctx, f.owner.WorkspaceID, f.project, a.ID, false); err != nil {
		t.Fatal(err)
	}
	f.sql.Exec(`UPDATE webhook_deliveries SET claimed_until = NULL`)
	for _, d := range f.claim(t, 10) {
		if d.EndpointID == a.ID {
			t.Fatalf("claimed %d of disabled endpoint", d.ID)
		}
	}
}

func TestExpiredLeaseIsClaimedAgain(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	f.endpoint(t, f.project, store.WebhookJSON, store.FiresAgents)
	f.agentNote(t, "one")
	first, err := f.st.ClaimWebhookDeliveries(ctx, 10, 200*time.Millisecond, nil)
	if err != nil || len(first) != 1 {
		t.Fatalf("claim: %v %v", first, err)
	}
	// The claimer "dies": nobody records a result. After the lease, the
	// delivery is claimed again (held ones excepted), as attempt 2.
	var again []store.DueWebhook
	for range 200 {
		if again, err = f.st.ClaimWebhookDeliveries(ctx, 10, time.Hour, []int64{first[0].ID}); err != nil || len(again) > 0 {
			t.Fatalf("claimed a delivery its sender still holds: %v %v", again, err)
		}
		if again, err = f.st.ClaimWebhookDeliveries(ctx, 10, time.Hour, nil); err != nil || len(again) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(again) != 1 || again[0].ID != first[0].ID || again[0].Attempt != 2 {
		t.Fatalf("after the lease: %+v %v", again, err)
	}
	// The first claimer's late result is refused; the second's is recorded.
	if ok, _ := f.st.FinishWebhookAttempt(ctx, first[0].ID, 1, store.WebhookAttempt{State: store.DeliveryDelivered}); ok {
		t.Fatal("a result of an expired lease was recorded")
	}
	if ok, _ := f.st.FinishWebhookAttempt(ctx, first[0].ID, 2, store.WebhookAttempt{State: store.DeliveryDelivered}); !ok {
		t.Fatal("the current attempt's result was refused")
	}
}

// TestConcurrentClaimsNeverOverlap runs eight claimers against one outbox:
// every delivery is claimed exactly once, an endpoint never has two in
// flight, and each endpoint's deliveries finish in note order.
func TestConcurrentClaimsNeverOverlap(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	const endpoints, notes = 12, 15
	for range endpoints {
		f.endpoint(t, f.project, store.WebhookJSON, store.FiresAgents)
	}
	for i := range notes {
		f.agentNote(t, fmt.Sprint("note ", i))
	}
	var mu sync.Mutex
	busy := map[int64]bool{}
	claimed := map[int64]int{}
	order := map[int64][]int64{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for idle := 0; idle < 50; {
				due, err := f.st.ClaimWebhookDeliveries(ctx, 3, time.Hour, nil)
				if err != nil {
					errs <- err
					return
				}
				if len(due) == 0 {
					idle++
					time.Sleep(5 * time.Millisecond)
					continue
				}
				idle = 0
				for _, d := range due {
					mu.Lock()
					if busy[d.EndpointID] {
						errs <- fmt.Errorf("endpoint %d has two deliveries in flight", d.EndpointID)
					}
					busy[d.EndpointID] = true
					claimed[d.ID]++
					order[d.EndpointID] = append(order[d.EndpointID], d.Note.ID)
					mu.Unlock()
				}
				for _, d := range due {
					mu.Lock()
					busy[d.EndpointID] = false
					mu.Unlock()
					if ok, err := f.st.FinishWebhookAttempt(ctx, d.ID, d.Attempt, store.WebhookAttempt{State: store.DeliveryDelivered, ResponseCode: 200}); !ok || err != nil {
						errs <- fmt.Errorf("finish %d: %v %v", d.ID, ok, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(claimed) != endpoints*notes {
		t.Fatalf("%d deliveries claimed, want %d", len(claimed), endpoints*notes)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Fatalf("delivery %d claimed %d times", id, n)
		}
	}
	for e, ids := range order {
		if !slices.IsSorted(ids) || len(ids) != notes {
			t.Fatalf("endpoint %d got notes %v", e, ids)
		}
	}
}

func TestOutboxDepthAndPrune(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	a := f.endpoint(t, f.project, store.WebhookJSON, store.FiresAgents)
	f.endpoint(t, f.project, store.WebhookJSON, store.FiresAgents)
	depth, err := f.st.WebhookOutboxDepth(ctx)
	if err != nil || depth != (store.OutboxDepth{}) {
		t.Fatalf("empty outbox: %+v %v", depth, err)
	}
	for i := range 3 {
		f.agentNote(t, fmt.Sprint("n", i))
	}
	f.sql.Exec(`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '90 seconds'`)
	depth, err = f.st.WebhookOutboxDepth(ctx)
	if err != nil || depth.Pending != 6 || depth.Due != 2 || depth.OldestDueAge < 89*time.Second || depth.OldestDueAge > time.Hour {
		t.Fatalf("6 pending, 2 endpoints due: %+v %v", depth, err)
	}
	f.claim(t, 10)
	if depth, err = f.st.WebhookOutboxDepth(ctx); err != nil || depth.Pending != 6 || depth.Due != 0 || depth.OldestDueAge != 0 {
		t.Fatalf("both heads in flight: %+v %v", depth, err)
	}

	// Prune keeps the newest DeliveryLogSize of an endpoint and every pending one.
	f.sql.Exec(`
		INSERT INTO webhook_deliveries (endpoint_id, state, finished_at) SELECT $1, 'delivered', now() FROM generate_series(1, $2)`,
		a.ID, store.DeliveryLogSize+5)
	n, err := f.st.PruneWebhookDeliveries(ctx)
	if err != nil || n != 5 {
		// a has 3 pending (older) and 55 delivered: the 50 newest stay, the 5
		// oldest delivered go, the pending ones stay.
		t.Fatalf("pruned %d, %v", n, err)
	}
	var left, pending int
	if err := f.sql.QueryRow(`SELECT count(*), count(*) FILTER (WHERE state = 'pending') FROM webhook_deliveries WHERE endpoint_id = $1`, a.ID).Scan(&left, &pending); err != nil {
		t.Fatal(err)
	}
	if pending != 3 || left != store.DeliveryLogSize+3 {
		t.Fatalf("left %d rows (%d pending)", left, pending)
	}
}
