package timers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// replica is one replica's store, listener and runner on a shared database.
func replica(t *testing.T, dsn string, minute time.Duration) *store.Store {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	st.SetQuestionMinute(minute)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := st.NewListener(log)
	r := New(Options{Store: st, Logger: log})
	r.WakeOn(l)
	done := make(chan struct{}, 2)
	go func() { l.Run(ctx); done <- struct{}{} }()
	go func() { r.Run(ctx); done <- struct{}{} }()
	<-l.Ready()
	t.Cleanup(func() {
		cancel()
		<-done
		<-done
		st.Close()
	})
	return st
}

// TestRunnersFireEachTimerOnceAtItsTime: two runners on one database (two
// replicas) fire each question's notice once, no sooner than its delay and
// soon after it (woken at the soonest due time, not at their idle look),
// with no mail queued when email is off (no composer).
func TestRunnersFireEachTimerOnceAtItsTime(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	const minute = 300 * time.Millisecond
	a := replica(t, dsn, minute)
	replica(t, dsn, minute)
	ctx := context.Background()
	o, err := a.CreateOwner(ctx, store.NewOwner{Email: "o@example.com", DisplayName: "Olive", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.CreateProject(ctx, o.WorkspaceID, "P")
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.CreateSession(ctx, store.NewSession{WorkspaceID: o.WorkspaceID, ProjectID: p.ID, Type: "team_session", Title: "S"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.CreateConnection(ctx, store.NewConnection{WorkspaceID: o.WorkspaceID, OwnerID: o.ID, ClientName: "cli", Scopes: store.AllScopes, ProjectIDs: []int64{p.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ClaimProfile(ctx, o.WorkspaceID, c.ID, "ada", "Ada"); err != nil {
		t.Fatal(err)
	}
	if err := a.Invite(ctx, o.WorkspaceID, s.ID, c.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: o.WorkspaceID, ProjectID: p.ID,
		URL: "https://hooks.example/x", Kind: store.WebhookJSON}); err != nil {
		t.Fatal(err)
	}
	// Blocking: one minute; normal: none (due at once).
	if err := a.SetProjectQuestionSettings(ctx, o.WorkspaceID, p.ID, store.QuestionSettings{BlockingMinutes: 1, NormalMinutes: 0, ExpiryHours: 24}); err != nil {
		t.Fatal(err)
	}
	sql := storetest.SQLAt(t, dsn)
	count := func(q string, args ...any) int {
		var n int
		if err := sql.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const n = 20
	asked := time.Now()
	for i := range n {
		urgency := store.UrgencyNormal
		if i%2 == 1 {
			urgency = store.UrgencyBlocking
		}
		if _, _, err := a.AskQuestion(ctx, store.AgentQuestion{WorkspaceID: o.WorkspaceID, ConnectionID: c.ID, SessionType: s.Type, SessionID: s.PublicID,
			Text: fmt.Sprint("Question ", i), Urgency: urgency, IdempotencyKey: fmt.Sprint("q", i)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for count(`SELECT count(*) FROM webhook_deliveries WHERE event = 'question'`) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d notices fired", count(`SELECT count(*) FROM webhook_deliveries WHERE event = 'question'`), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(asked)
	if got := count(`SELECT count(*) FROM (SELECT note_id FROM webhook_deliveries WHERE event = 'question' GROUP BY note_id HAVING count(*) = 1) x`); got != n {
		t.Fatalf("%d questions have exactly one notice, want %d", got, n)
	}
	if early := count(`SELECT count(*) FROM webhook_deliveries d JOIN questions q ON q.note_id = d.note_id
		WHERE q.urgency = 'blocking' AND d.created_at < q.created_at + interval '300 milliseconds'`); early != 0 {
		t.Fatalf("%d blocking notices fired before their delay", early)
	}
	if took > 5*time.Second {
		t.Errorf("the notices took %v: the runners did not wake at the due time", took)
	}
	if m := count(`SELECT count(*) FROM mail_outbox`); m != 0 {
		t.Errorf("%d mails queued with email off", m)
	}
	if r := count(`SELECT count(*) FROM questions WHERE timer <> 'reminder'`); r != 0 {
		t.Errorf("%d questions not waiting for their reminder", r)
	}
	t.Logf("%d notices (half due at once, half after %v) fired by two runners once each, the last %v after asking", n, minute, took.Round(time.Millisecond))
}
