package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// hookFixture is a mail fixture plus a second project and fixtures on the
// test's database.
type hookFixture struct {
	*mailFixture
	sql     *storetest.Fixtures
	project int64
	other   int64 // another project of the workspace
}

// requestStatements counts the statements the store sent for callers (not
// background work, such as the notifications it sends after a commit).
func (f *hookFixture) requestStatements() uint64 { return f.st.StatementCounts().Request }

func newHookFixture(t *testing.T) *hookFixture {
	t.Helper()
	ctx := context.Background()
	f := &hookFixture{}
	st := storetest.New(t)
	f.sql = storetest.SQL(t, st)
	f.mailFixture = fillMailFixture(t, st)
	f.project = f.sess.ProjectID
	p, err := st.CreateProject(ctx, f.owner.WorkspaceID, "Other")
	if err != nil {
		t.Fatal(err)
	}
	f.other = p.ID
	return f
}

func (f *hookFixture) endpoint(t *testing.T, project int64, kind, fires string) *store.WebhookEndpoint {
	t.Helper()
	e, secret, err := f.st.CreateWebhookEndpoint(context.Background(), store.NewWebhookEndpoint{WorkspaceID: f.owner.WorkspaceID,
		ProjectID: project, URL: "https://hooks.example.com/" + kind, Kind: kind, Fires: fires})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "whsec_") || len(secret) != len("whsec_")+44 {
		t.Fatalf("secret %q: want whsec_ and 32 bytes in base64", secret)
	}
	return e
}

// deliveries lists the outbox as "endpoint:note" (note 0 for a test delivery), in id order.
func (f *hookFixture) deliveries(t *testing.T) []string {
	t.Helper()
	rows := f.sql.Query(`SELECT endpoint_id, coalesce(note_id, 0) FROM webhook_deliveries ORDER BY id`)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var e, n int64
		err := r.Scan(&e, &n)
		return fmt.Sprintf("%d:%d", e, n), err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWebhookEndpointValidation(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, url, kind, fires, field string
	}{
		{"empty URL", "", "json", "", "url"},
		{"not a URL", "hooks.example.com/x", "json", "", "url"},
		{"relative", "/hooks", "json", "", "url"},
		{"ftp", "ftp://hooks.example.com/x", "json", "", "url"},
		{"javascript", "javascript:alert(1)", "json", "", "url"},
		{"mailto", "mailto:a@example.com", "json", "", "url"},
		{"no host", "https:///x", "json", "", "url"},
		{"userinfo", "https://user:pass@hooks.example.com/x", "json", "", "url"},
		{"user only", "https://user@hooks.example.com/x", "json", "", "url"},
		{"over 2 KiB", "https://hooks.example.com/" + strings.Repeat("a", 2030), "json", "", "url"},
		{"space inside", "https://hooks.example.com/a b", "json", "", "url"},
		{"fragment", "https://hooks.example.com/x#y", "json", "", "url"},
		{"unknown kind", "https://hooks.example.com/x", "xml", "", "kind"},
		{"no kind", "https://hooks.example.com/x", "", "", "kind"},
		{"unknown fires", "https://hooks.example.com/x", "slack", "analysis", "fires"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := f.st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: f.owner.WorkspaceID, ProjectID: f.project,
				URL: tc.url, Kind: tc.kind, Fires: tc.fires})
			var fe *store.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("got %v, want a refusal of %s", err, tc.field)
			}
		})
	}
	// Exactly 2 KiB is fine; surrounding spaces are trimmed; fires defaults to agents.
	long := "https://hooks.example.com/" + strings.Repeat("a", store.MaxWebhookURLLen-len("https://hooks.example.com/"))
	for _, u := range []string{long, "  http://127.0.0.1:8080/hook?x=1  "} {
		e, _, err := f.st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: f.owner.WorkspaceID, ProjectID: f.project, URL: u, Kind: "slack"})
		if err != nil {
			t.Fatalf("%.40s…: %v", u, err)
		}
		if e.URL != strings.TrimSpace(u) || e.Fires != store.FiresAgents || !e.Enabled {
			t.Fatalf("stored %+v", e)
		}
	}
	if n := len(f.deliveries(t)); n != 0 {
		t.Fatalf("%d deliveries before any note", n)
	}
}

func TestWebhookEndpointsAreScopedToWorkspaceAndProject(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	e := f.endpoint(t, f.project, store.WebhookJSON, store.FiresAgents)
	stranger, err := f.st.CreateOwner(ctx, store.NewOwner{Email: "s@example.com", DisplayName: "S", Password: "long enough password", WorkspaceName: "Elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	ws := f.owner.WorkspaceID
	for _, who := range []struct {
		name          string
		ws, projectID int64
	}{
		{"another workspace", stranger.WorkspaceID, f.project},
		{"another project", ws, f.other},
	} {
		t.Run(who.name, func(t *testing.T) {
			for name, err := range map[string]error{
				"get":     second(f.st.GetWebhookEndpoint(ctx, who.ws, who.projectID, e.ID)),
				"disable": f.st.SetWebhookEndpointEnabled(ctx, who.ws, who.projectID, e.ID, false),
				"enable":  f.st.SetWebhookEndpointEnabled(ctx, who.ws, who.projectID, e.ID, true),
				"test":    f.st.QueueWebhookTest(ctx, who.ws, who.projectID, e.ID),
				"delete":  f.st.DeleteWebhookEndpoint(ctx, who.ws, who.projectID, e.ID),
			} {
				if !errors.Is(err, store.ErrNotFound) {
					t.Errorf("%s: %v, want ErrNotFound", name, err)
				}
			}
			list, err := f.st.ListWebhookEndpoints(ctx, who.ws, who.projectID)
			if err != nil || len(list) != 0 {
				t.Errorf("list: %v %v", list, err)
			}
			log, err := f.st.ListWebhookDeliveries(ctx, who.ws, who.projectID, e.ID)
			if err != nil || len(log) != 0 {
				t.Errorf("log: %v %v", log, err)
			}
			_, _, err = f.st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: who.ws, ProjectID: f.project + f.other + 100,
				URL: "https://x.example.com", Kind: "json"})
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("create in a project that is not there: %v", err)
			}
		})
	}
	got, err := f.st.GetWebhookEndpoint(ctx, ws, f.project, e.ID)
	if err != nil || !got.Enabled || len(f.deliveries(t)) != 0 {
		t.Fatalf("the endpoint changed: %+v %v %v", got, err, f.deliveries(t))
	}
	if _, _, err := f.st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: stranger.WorkspaceID, ProjectID: f.project,
		URL: "https://x.example.com", Kind: "json"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("create in another workspace's project: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestNotesQueueDeliveries checks which notes fire which endpoints, and that
// the outbox rows, the senders' wake-up and the note are written by the same
// statements as before: posting a note takes as many round trips with
// endpoints as without.
func TestNotesQueueDeliveries(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()

	before := f.requestStatements()
	f.agentNote(t, "no endpoints yet")
	plain := f.requestStatements() - before

	agents := f.endpoint(t, f.project, store.WebhookSlack, store.FiresAgents)
	all := f.endpoint(t, f.project, store.WebhookJSON, store.FiresAll)
	off := f.endpoint(t, f.project, store.WebhookJSON, store.FiresAll)
	if err := f.st.SetWebhookEndpointEnabled(ctx, f.owner.WorkspaceID, f.project, off.ID, false); err != nil {
		t.Fatal(err)
	}
	elsewhere := f.endpoint(t, f.other, store.WebhookJSON, store.FiresAll)

	wake := wakeUps(t, f.st)
	before = f.requestStatements()
	agentNote := f.agentNote(t, "from the agent")
	if n := f.requestStatements() - before; n != plain {
		t.Fatalf("an agent note with endpoints took %d statements, %d without", n, plain)
	}
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("no NOTIFY on the webhooks channel after a note queued deliveries")
	}
	owner := store.OwnerNote{WorkspaceID: f.owner.WorkspaceID, SessionID: f.sess.ID, OwnerID: f.owner.ID, Type: store.MessageNote, Subject: "s", Body: "from the owner"}
	ownerNote, _, err := f.st.PostOwnerNote(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	reply := owner
	reply.Type, reply.ReplyTo, reply.Body = store.MessageReply, agentNote, "a reply"
	replyNote, _, err := f.st.PostOwnerNote(ctx, reply)
	if err != nil {
		t.Fatal(err)
	}
	analysis := owner
	analysis.Type, analysis.Body = store.MessageAnalysis, "internal"
	if _, _, err := f.st.PostOwnerNote(ctx, analysis); err != nil {
		t.Fatal(err)
	}
	// A retry of the agent's note is a duplicate: nothing more is queued.
	if _, dup, err := f.st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: f.owner.WorkspaceID, ConnectionID: f.connID,
		SessionType: f.sess.Type, SessionID: f.sess.PublicID, Subject: "from the agent", Body: "b", IdempotencyKey: "from the agent"}); err != nil || !dup {
		t.Fatalf("retry: dup %v err %v", dup, err)
	}
	want := []string{
		fmt.Sprintf("%d:%d", agents.ID, agentNote), fmt.Sprintf("%d:%d", all.ID, agentNote),
		fmt.Sprintf("%d:%d", all.ID, ownerNote.ID), fmt.Sprintf("%d:%d", all.ID, replyNote.ID),
	}
	if got := f.deliveries(t); !slices.Equal(got, want) {
		t.Fatalf("outbox %v, want %v (disabled %d and other project's %d get none; analysis fires nothing)", got, want, off.ID, elsewhere.ID)
	}

	// A note that rolls back leaves no delivery: an owner note to a session
	// that is not the workspace's fails inside the same transaction.
	if _, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: f.owner.WorkspaceID + 1000, SessionID: f.sess.ID, OwnerID: f.owner.ID,
		Type: store.MessageNote, Subject: "s", Body: "x"}); err == nil {
		t.Fatal("a note to another workspace's session was accepted")
	}
	if got := f.deliveries(t); len(got) != len(want) {
		t.Fatalf("outbox after a refused note: %v", got)
	}
}

// wakeUps runs a note hub that listens on the webhooks channel, as a
// replica's does, and returns a channel that receives each wake-up.
func wakeUps(t *testing.T, st *store.Store) <-chan struct{} {
	t.Helper()
	out := make(chan struct{}, 100)
	hub := quietHub(st)
	hub.OnNotify(store.WebhooksChannel, func() { out <- struct{}{} })
	t.Cleanup(startHub(hub))
	<-hub.Ready()
	// The hub wakes its listeners once when it connects (notifications sent
	// while it was away are lost): that one is not the test's.
	select {
	case <-out:
	case <-time.After(10 * time.Second):
		t.Fatal("the hub did not wake its listener on connecting")
	}
	return out
}

func TestEnableAndTestDeliveryWakeSenders(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	e := f.endpoint(t, f.project, store.WebhookJSON, store.FiresAgents)
	wake := wakeUps(t, f.st)
	expectWake := func(what string) {
		t.Helper()
		select {
		case <-wake:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no NOTIFY on the webhooks channel", what)
		}
	}
	if err := f.st.QueueWebhookTest(ctx, f.owner.WorkspaceID, f.project, e.ID); err != nil {
		t.Fatal(err)
	}
	expectWake("send test")
	if err := f.st.SetWebhookEndpointEnabled(ctx, f.owner.WorkspaceID, f.project, e.ID, false); err != nil {
		t.Fatal(err)
	}
	if err := f.st.QueueWebhookTest(ctx, f.owner.WorkspaceID, f.project, e.ID); !errors.Is(err, store.ErrWebhookDisabled) {
		t.Fatalf("test of a disabled endpoint: %v", err)
	}
	if err := f.st.SetWebhookEndpointEnabled(ctx, f.owner.WorkspaceID, f.project, e.ID, true); err != nil {
		t.Fatal(err)
	}
	expectWake("enable")
	if got := f.deliveries(t); !slices.Equal(got, []string{fmt.Sprintf("%d:0", e.ID)}) {
		t.Fatalf("outbox %v, want one test delivery", got)
	}
	select {
	case <-wake:
		t.Fatal("a NOTIFY nobody asked for")
	default:
	}
}

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
