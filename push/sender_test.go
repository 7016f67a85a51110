package push_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/push"
	"github.com/osfoundry/osfoundry/push/pushtest"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// world is a workspace with an owner, a project, a session with an agent
// invited to it, a push service, and a push sender running.
type world struct {
	st      *store.Store
	sql     *storetest.Fixtures
	owner   *store.Owner
	project *store.Project
	session *store.Session
	connID  int64
	keys    *push.Keys
	svc     *pushtest.Service
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{st: storetest.New(t)}
	w.sql = storetest.SQL(t, w.st)
	var err error
	if w.owner, err = w.st.CreateOwner(ctx, store.NewOwner{Email: "olive@example.com", DisplayName: "Olive Owner", Password: "long enough password"}); err != nil {
		t.Fatal(err)
	}
	if w.project, err = w.st.CreateProject(ctx, w.owner.WorkspaceID, "Storefront"); err != nil {
		t.Fatal(err)
	}
	if w.session, err = w.st.CreateSession(ctx, store.NewSession{WorkspaceID: w.owner.WorkspaceID, ProjectID: w.project.ID, Type: "team_session", Title: "Checkout redesign"}); err != nil {
		t.Fatal(err)
	}
	c, err := w.st.CreateConnection(ctx, store.NewConnection{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, ClientName: "cli",
		Scopes: store.AllScopes, ProjectIDs: []int64{w.project.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.ClaimProfile(ctx, w.owner.WorkspaceID, c.ID, "ask-bot", "Ask Bot"); err != nil {
		t.Fatal(err)
	}
	if err := w.st.Invite(ctx, w.owner.WorkspaceID, w.session.ID, c.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	w.connID = c.ID
	if w.keys, err = push.GenerateKeys(); err != nil {
		t.Fatal(err)
	}
	w.svc = pushtest.Start(t, w.keys.PublicKey())
	sender := push.New(push.FastOptions(push.Options{Store: w.st, Keys: w.keys, Subject: push.Subject("https://foundry.example.com"),
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil)), Allow: []netip.AddrPort{w.svc.AddrPort()}}))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { sender.Run(runCtx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// subscribe subscribes a new device of the push service for the owner.
func (w *world) subscribe(t *testing.T, ownerID int64) (*pushtest.Device, *store.PushSubscription) {
	t.Helper()
	d := w.svc.Subscribe()
	p, err := w.st.SubscribePush(context.Background(), w.owner.WorkspaceID, ownerID, store.PushSubscribe{
		Endpoint: d.Endpoint, P256dh: mustB64(t, d.P256dh), Auth: mustB64(t, d.Auth), Name: "Chrome on Android", UserAgent: "test"}, true)
	if err != nil {
		t.Fatal(err)
	}
	return d, p
}

func (w *world) ask(t *testing.T, key, urgency, text string, options ...string) *store.Question {
	t.Helper()
	q, _, err := w.st.AskQuestion(context.Background(), store.AgentQuestion{WorkspaceID: w.owner.WorkspaceID, ConnectionID: w.connID,
		SessionType: w.session.Type, SessionID: w.session.PublicID, Text: text, Options: options, Urgency: urgency, IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// waitState waits until every push of the note is in state.
func (w *world) waitState(t *testing.T, noteID int64, state string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left int
		w.sql.QueryRow(`SELECT count(*) FROM push_outbox WHERE note_id = $1 AND state <> $2`, noteID, state).Scan(&left)
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pushes of note %d not all %s", noteID, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := pushtestDecode(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A blocking question reaches each device at once, signed for the push
// service and encrypted to the device's keys: the title, one line, the
// note's tag and URL, and its options as actions; nothing more of the note.
func TestBlockingQuestionIsPushedAtOnceToEachDevice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	phone, _ := w.subscribe(t, w.owner.ID)
	laptop, _ := w.subscribe(t, w.owner.ID)
	q := w.ask(t, "q1", store.UrgencyBlocking, "Ship the new checkout today?\n\nThe tests pass; the secret plan is in the body.", "Yes", "No", "Wait", "Ask Ana")
	for _, d := range []*pushtest.Device{phone, laptop} {
		m := w.svc.WaitMessages(t, d, 1, 20*time.Second)[0]
		p := m.Payload
		if p.Title != "Ask Bot asks in Checkout redesign" || p.Body != "Ship the new checkout today?" {
			t.Errorf("title %q, body %q", p.Title, p.Body)
		}
		if want := "/sessions/" + itoa(w.session.ID) + "?note=" + itoa(q.ID) + "#note-" + itoa(q.ID); p.URL != want {
			t.Errorf("url %q, want %q", p.URL, want)
		}
		if p.Tag != "note-"+itoa(q.ID) || m.Topic != p.Tag || m.Urgency != "high" || m.TTL != "86400" {
			t.Errorf("tag %q topic %q urgency %q ttl %q", p.Tag, m.Topic, m.Urgency, m.TTL)
		}
		if len(p.Actions) != push.MaxActions || p.Actions[0] != (push.Action{Action: "0", Title: "Yes"}) || p.Actions[2].Title != "Wait" {
			t.Errorf("actions %+v", p.Actions)
		}
		if p.AnswerURL != "/sessions/"+itoa(w.session.ID)+"/questions/"+itoa(q.ID)+"/answer" {
			t.Errorf("answer url %q", p.AnswerURL)
		}
		if strings.Contains(string(m.Raw), "secret plan") {
			t.Errorf("the payload carries more than the one line: %s", m.Raw)
		}
	}
	w.waitState(t, q.ID, store.PushSent)
	subs, err := w.st.PushSubscriptions(context.Background(), w.owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		if s.LastPushAt == nil {
			t.Errorf("device %d has no last push", s.ID)
		}
	}
}

// A push service answering 404 or 410 no longer knows the subscription: it
// is dropped, and nothing is sent to it again.
func TestGoneSubscriptionIsDropped(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusNotFound, http.StatusGone} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			d, sub := w.subscribe(t, w.owner.ID)
			kept, _ := w.subscribe(t, w.owner.ID)
			w.svc.Answer(d, status)
			w.ask(t, "q1", store.UrgencyBlocking, "Merge?", "Yes", "No")
			w.svc.WaitMessages(t, kept, 1, 20*time.Second)
			deadline := time.Now().Add(20 * time.Second)
			for {
				subs, err := w.st.PushSubscriptions(context.Background(), w.owner.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(subs) == 1 && subs[0].ID != sub.ID {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("subscriptions %+v after %d", subs, status)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if n := len(w.svc.Messages(d)); n != 0 {
				t.Errorf("%d pushes reached the dropped device", n)
			}
		})
	}
}

// 429 (with Retry-After) and 5xx are tried again with a backoff, and the
// push then arrives once.
func TestThrottledPushIsRetried(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d, _ := w.subscribe(t, w.owner.ID)
	w.svc.Answer(d, http.StatusTooManyRequests, http.StatusServiceUnavailable)
	q := w.ask(t, "q1", store.UrgencyBlocking, "Deploy?")
	w.waitState(t, q.ID, store.PushSent)
	if got := w.svc.Messages(d); len(got) != 1 || w.svc.Refused(d) != 2 {
		t.Fatalf("%d pushes arrived after %d refusals, want 1 after 2", len(got), w.svc.Refused(d))
	}
	var attempts int
	w.sql.QueryRow(`SELECT attempts FROM push_outbox WHERE note_id = $1`, q.ID).Scan(&attempts)
	if attempts != 3 {
		t.Errorf("%d attempts, want 3", attempts)
	}
}

// A question that does not block waits for the project's delay; what the
// owner read meanwhile, or what was answered, is never pushed.
func TestNormalQuestionWaitsAndSkipsWhatWasRead(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d, _ := w.subscribe(t, w.owner.ID)
	ctx := context.Background()
	read := w.ask(t, "q1", store.UrgencyNormal, "Rename the table?")
	answered := w.ask(t, "q2", store.UrgencyNormal, "Drop the column?", "Yes", "No")
	pushed := w.ask(t, "q3", store.UrgencyNormal, "Bump the version?")
	var due int
	w.sql.QueryRow(`SELECT count(*) FROM push_outbox WHERE next_attempt_at > now() + interval '10 minutes'`).Scan(&due)
	if due != 3 {
		t.Fatalf("%d of 3 pushes wait for the project's 15 minutes", due)
	}
	if d, err := w.st.PushOutboxDepth(ctx); err != nil || d.Pending != 3 || d.Due != 0 || d.Failed != 0 {
		t.Fatalf("depth %+v %v, want 3 pending, none due", d, err)
	}
	if _, err := w.st.MarkMailRead(ctx, w.owner.ID, w.session.ID, read.ID); err != nil {
		t.Fatal(err)
	}
	zero := 0
	if _, err := w.st.AnswerQuestion(ctx, store.Answer{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, QuestionID: answered.ID,
		SessionID: w.session.ID, Option: &zero}); err != nil {
		t.Fatal(err)
	}
	// The read mark covers read.ID only; pushed is newer.
	w.sql.Exec(`UPDATE push_outbox SET next_attempt_at = now()`)
	w.waitState(t, pushed.ID, store.PushSent)
	w.waitState(t, read.ID, store.PushSkipped)
	w.waitState(t, answered.ID, store.PushSkipped)
	got := w.svc.Messages(d)
	if len(got) != 1 || got[0].Payload.Tag != "note-"+itoa(pushed.ID) || got[0].Urgency != "normal" {
		t.Fatalf("pushes %+v, want only note %d's", got, pushed.ID)
	}
}

// Replies to the owner are pushed only when the owner turned them on, after
// the project's delay (none here).
func TestRepliesArePushedWhenTurnedOn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	d, _ := w.subscribe(t, w.owner.ID)
	if err := w.st.SetProjectQuestionSettings(ctx, w.owner.WorkspaceID, w.project.ID, store.QuestionSettings{BlockingMinutes: 0, NormalMinutes: 0, ExpiryHours: 24}); err != nil {
		t.Fatal(err)
	}
	reply := func(key, subject string) *store.Note {
		n, _, err := w.st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: w.owner.WorkspaceID, ConnectionID: w.connID, SessionType: w.session.Type,
			SessionID: w.session.PublicID, To: store.OwnerSlug(w.owner.ID), Subject: subject, Body: "Details follow.\nMore.", IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	off := reply("r1", "Not pushed")
	if err := w.st.SetPushSettings(ctx, w.owner.WorkspaceID, w.owner.ID, store.PushSettings{Questions: true, Replies: true}); err != nil {
		t.Fatal(err)
	}
	on := reply("r2", "PR opened")
	m := w.svc.WaitMessages(t, d, 1, 20*time.Second)[0]
	if m.Payload.Title != "Ask Bot replied in Checkout redesign" || m.Payload.Body != "PR opened" || m.Payload.Tag != "note-"+itoa(on.ID) {
		t.Errorf("payload %+v", m.Payload)
	}
	var queued int
	w.sql.QueryRow(`SELECT count(*) FROM push_outbox WHERE note_id = $1`, off.ID).Scan(&queued)
	if queued != 0 {
		t.Errorf("a reply was queued while replies were off")
	}
	// Questions turned off: none queued.
	if err := w.st.SetPushSettings(ctx, w.owner.WorkspaceID, w.owner.ID, store.PushSettings{}); err != nil {
		t.Fatal(err)
	}
	q := w.ask(t, "q1", store.UrgencyBlocking, "Now?")
	w.sql.QueryRow(`SELECT count(*) FROM push_outbox WHERE note_id = $1`, q.ID).Scan(&queued)
	if queued != 0 {
		t.Errorf("a question was queued while questions were off")
	}
}

// Devices are the owner's own: another owner neither lists, renames nor
// removes them, and subscribing the same browser moves it.
func TestDevicesArePerOwner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	other, err := w.st.CreateOwner(ctx, store.NewOwner{Email: "oscar@example.com", DisplayName: "Oscar", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	_, mine := w.subscribe(t, w.owner.ID)
	if subs, _ := w.st.PushSubscriptions(ctx, other.ID); len(subs) != 0 {
		t.Errorf("another owner lists %+v", subs)
	}
	if err := w.st.RenamePushSubscription(ctx, other.ID, mine.ID, "Mine now"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rename by another owner: %v", err)
	}
	if err := w.st.RemovePushSubscription(ctx, other.ID, mine.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("remove by another owner: %v", err)
	}
	if err := w.st.RenamePushSubscription(ctx, w.owner.ID, mine.ID, "Olive's phone"); err != nil {
		t.Fatal(err)
	}
	if err := w.st.RenamePushSubscription(ctx, w.owner.ID, mine.ID, "bad\x07name"); store.FieldErrorsOf(err) == nil {
		t.Errorf("a control character in a name: %v", err)
	}
	subs, _ := w.st.PushSubscriptions(ctx, w.owner.ID)
	if len(subs) != 1 || subs[0].Name != "Olive's phone" {
		t.Fatalf("subscriptions %+v", subs)
	}
	if _, err := w.st.SubscribePush(ctx, w.owner.WorkspaceID, w.owner.ID, store.PushSubscribe{Endpoint: "http://push.example/x",
		P256dh: make([]byte, 65), Auth: make([]byte, 16), Name: "x"}, false); store.FieldErrorsOf(err) == nil || store.FieldErrorsOf(err)[0].Field != "endpoint" {
		t.Errorf("an http endpoint: %v", err)
	}
	if err := w.st.RemovePushSubscription(ctx, w.owner.ID, mine.ID); err != nil {
		t.Fatal(err)
	}
}

// A push service that refuses for good (400: a malformed push) fails the
// push at once, and the outbox's metrics count it.
func TestRefusedPushFails(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d, _ := w.subscribe(t, w.owner.ID)
	w.svc.Answer(d, http.StatusBadRequest)
	q := w.ask(t, "q1", store.UrgencyBlocking, "Deploy?")
	w.waitState(t, q.ID, store.PushFailed)
	depth, err := w.st.PushOutboxDepth(context.Background())
	if err != nil || depth.Failed != 1 || depth.Pending != 0 {
		t.Fatalf("depth %+v %v", depth, err)
	}
	var lastError string
	w.sql.QueryRow(`SELECT last_error FROM push_outbox WHERE note_id = $1`, q.ID).Scan(&lastError)
	if !strings.Contains(lastError, "400") {
		t.Errorf("last error %q", lastError)
	}
}

// A question decided replaces its notification on each device its push
// reached, with the same tag: who answered what, no options, silently.
// A device its push never reached gets nothing.
func TestDecidedQuestionReplacesItsNotification(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	reached, _ := w.subscribe(t, w.owner.ID)
	q := w.ask(t, "q1", store.UrgencyBlocking, "Merge the branch?", "Yes", "No")
	w.svc.WaitMessages(t, reached, 1, 20*time.Second)
	w.waitState(t, q.ID, store.PushSent)
	late, _ := w.subscribe(t, w.owner.ID)
	zero := 0
	if _, err := w.st.AnswerQuestion(ctx, store.Answer{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, QuestionID: q.ID,
		SessionID: w.session.ID, Option: &zero}); err != nil {
		t.Fatal(err)
	}
	got := w.svc.WaitMessages(t, reached, 2, 20*time.Second)
	first, update := got[0].Payload, got[1].Payload
	if update.Tag != first.Tag || update.Title != "Olive Owner answered: Yes" || update.Body != "Merge the branch?" ||
		len(update.Actions) != 0 || update.AnswerURL != "" || !update.Silent || got[1].Topic != first.Tag {
		t.Errorf("update %+v (topic %q), first %+v", update, got[1].Topic, first)
	}
	w.waitState(t, q.ID, store.PushSent)
	if n := len(w.svc.Messages(late)); n != 0 {
		t.Errorf("a device the question never reached got %d pushes", n)
	}
}
