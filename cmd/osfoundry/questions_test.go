package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
	"github.com/osfoundry/osfoundry/webhook"
)

// Questions through the real server processes: answered while the agent
// waits (the same replica and another), the question webhook event only
// after its delay, expiry told to the waiting agent, and the timers
// surviving kill -9.

// ask is ask_owner's arguments for the world's session.
func (w *world) ask(key, question string, more ...any) map[string]any {
	args := map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID, "question": question,
		"options": []string{"Yes", "No"}, "idempotency_key": key}
	for i := 0; i+1 < len(more); i += 2 {
		args[more[i].(string)] = more[i+1]
	}
	return args
}

// askAsync calls ask_owner in the background; the reply arrives on the
// channel.
func askAsync(t *testing.T, base, token string, args map[string]any) <-chan *toolReply {
	out := make(chan *toolReply, 1)
	go func() {
		r, err := callToolWithin(base, token, "ask_owner", args, 2*time.Minute)
		if err != nil {
			t.Errorf("ask_owner: %v", err)
			r = &toolReply{}
		}
		out <- r
	}()
	return out
}

// questionByText waits until the question exists and returns its id.
func questionByText(t *testing.T, dsn, text string) int64 {
	t.Helper()
	var id int
	awaitCond(t, 20*time.Second, "the question "+text, func() bool {
		id = countRows(t, dsn, `SELECT coalesce(max(q.note_id), 0)::int FROM questions q JOIN notes n ON n.id = q.note_id WHERE n.body = $1`, text)
		return id != 0
	})
	return int64(id)
}

// clickOption answers question id on its session page at o's base as the
// owner's browser does without script: the options form, its CSRF token,
// the button's value.
func (o *ownerBrowser) clickOption(sessionID, id int64, option int) (*http.Response, error) {
	_, doc, err := o.page(fmt.Sprintf("/sessions/%d", sessionID))
	if err != nil {
		return nil, err
	}
	form := doc.Find(fmt.Sprintf(`#question-%d form[data-testid="question-options"]`, id))
	if form.Length() != 1 {
		return nil, fmt.Errorf("no options form for question %d on the session page", id)
	}
	values := inputs(doc, fmt.Sprintf(`#question-%d form[data-testid="question-options"]`, id), false)
	values.Set("option", fmt.Sprint(option))
	return o.post(form.AttrOr("action", ""), values)
}

// TestQuestionAnsweredWhileTheAgentWaits: the agent's ask_owner call waits
// on replica A; the owner clicks an option on the session page, served by
// A and then by replica B; either way the waiting call ends at once with
// the answer and who gave it.
func TestQuestionAnsweredWhileTheAgentWaits(t *testing.T) {
	t.Parallel()
	rp := startReplicaPair(t, 1, startReplica)
	a, b, w := rp.a, rp.b, rp.w
	for _, c := range []struct {
		name  string
		owner *replica
	}{{"same replica", a}, {"across replicas", b}} {
		t.Run(c.name, func(t *testing.T) {
			owner := newOwnerBrowser(t, c.owner.URL, w)
			owner.signIn()
			text := "Merge now? (" + c.name + ")"
			reply := askAsync(t, a.URL, w.tokens[0], w.ask(c.name, text, "urgency", "blocking", "wait_seconds", 60))
			id := questionByText(t, rp.dsn, text)
			clicked := time.Now()
			res, err := owner.clickOption(w.session.ID, id, 1)
			if err != nil || res.StatusCode != http.StatusSeeOther {
				t.Fatalf("answer on %s: %v %v", c.owner.URL, res, err)
			}
			var r *toolReply
			select {
			case r = <-reply:
			case <-time.After(20 * time.Second):
				t.Fatal("the waiting call did not end after the answer")
			}
			took := time.Since(clicked)
			if r.isError || r.data["status"] != "answered" || r.data["answer"] != "No" || r.data["answered_by"] != "O" || r.data["answered_at"] == nil {
				t.Fatalf("ask_owner: %+v", r)
			}
			t.Logf("%s: owner's click → the waiting ask_owner's answer in %v", c.name, took.Round(time.Millisecond))
		})
	}
}

// questionSink records each delivery's body and headers, in arrival order.
type questionSink struct {
	url string
	mu  sync.Mutex
	got []sinkDelivery
}

type sinkDelivery struct {
	at     time.Time
	path   string
	header http.Header
	body   []byte
}

func newQuestionSink(t *testing.T) *questionSink {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &questionSink{url: "http://" + l.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.got = append(s.got, sinkDelivery{at: time.Now(), path: r.URL.Path, header: r.Header.Clone(), body: b})
		s.mu.Unlock()
		rw.WriteHeader(http.StatusNoContent)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *questionSink) deliveries(path string) []sinkDelivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sinkDelivery
	for _, d := range s.got {
		if d.path == path {
			out = append(out, d)
		}
	}
	return out
}

// endpoint adds an endpoint of kind at the sink's path and returns its
// signing key.
func (s *questionSink) endpoint(t *testing.T, w *world, path, kind string) []byte {
	t.Helper()
	_, secret, err := w.st.CreateWebhookEndpoint(context.Background(), store.NewWebhookEndpoint{WorkspaceID: w.owner.WorkspaceID,
		ProjectID: w.session.ProjectID, URL: s.url + path, Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestQuestionWebhookOnlyAfterTheDelay: a blocking question reaches a json
// and a Slack-compatible endpoint as the question event only once its
// project's delay has passed (3 minutes, a second each on the test server),
// signed the Standard Webhooks way; its reminder comes once; an answered
// question sends nothing more.
func TestQuestionWebhookOnlyAfterTheDelay(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	r := startWebhookReplica(t, dsn, "")
	r.waitReady()
	w := newWorld(t, dsn, r.URL, 1)
	ctx := context.Background()
	if err := w.st.SetProjectQuestionSettings(ctx, w.owner.WorkspaceID, w.session.ProjectID, store.QuestionSettings{BlockingMinutes: 3, NormalMinutes: 15, ExpiryHours: 24}); err != nil {
		t.Fatal(err)
	}
	sink := newQuestionSink(t)
	jsonKey := sink.endpoint(t, w, "/json", store.WebhookJSON)
	sink.endpoint(t, w, "/slack", store.WebhookSlack)

	asked := time.Now()
	res, err := callTool(r.URL, w.tokens[0], "ask_owner", w.ask("hook-1", "Deploy the hotfix tonight?", "urgency", "blocking"))
	if err != nil || res.isError || res.data["status"] != "open" {
		t.Fatalf("ask_owner: %v %+v", err, res)
	}
	id := int64(res.data["question_id"].(float64))
	awaitCond(t, 30*time.Second, "the question event at both endpoints", func() bool {
		return len(sink.deliveries("/json")) == 1 && len(sink.deliveries("/slack")) == 1
	})
	j, s := sink.deliveries("/json")[0], sink.deliveries("/slack")[0]
	for _, d := range []sinkDelivery{j, s} {
		if after := d.at.Sub(asked); after < 3*time.Second {
			t.Fatalf("a question event arrived %v after asking, before the 3 s delay", after)
		}
	}
	t.Logf("question asked → webhook event after %v (delay 3 s)", j.at.Sub(asked).Round(time.Millisecond))
	sec, _ := strconv.ParseInt(j.header.Get("webhook-timestamp"), 10, 64)
	at := time.Unix(sec, 0)
	if got := j.header.Get("webhook-signature"); got != webhook.Signature(jsonKey, j.header.Get("webhook-id"), at, j.body) {
		t.Fatalf("json delivery signature %q does not verify", got)
	}
	var ev webhook.Event
	if err := json.Unmarshal(j.body, &ev); err != nil || ev.Type != webhook.EventQuestionAsked || ev.Question == nil || ev.Question.ID != id ||
		ev.Question.Question != "Deploy the hotfix tonight?" || strings.Join(ev.Question.Options, ",") != "Yes,No" || ev.Question.Urgency != "blocking" ||
		!strings.HasPrefix(ev.Links.Question, r.URL+fmt.Sprintf("/sessions/%d?note=%d", w.session.ID, id)) {
		t.Fatalf("json event %s: %v", j.body, err)
	}
	var slack map[string]string
	if err := json.Unmarshal(s.body, &slack); err != nil || !strings.Contains(slack["text"], "Deploy the hotfix tonight?") ||
		!strings.Contains(slack["text"], "1. Yes\n2. No") || !strings.Contains(slack["text"], ev.Links.Question) {
		t.Fatalf("slack text %q: %v", slack["text"], err)
	}

	// The reminder, made due now: once, at both.
	execSQL(t, dsn, `UPDATE questions SET due_at = now() WHERE note_id = $1 AND timer = 'reminder'`, id)
	execSQL(t, dsn, `SELECT pg_notify($1, '')`, store.TimersChannel)
	awaitCond(t, 30*time.Second, "the reminder at both endpoints", func() bool {
		return len(sink.deliveries("/json")) == 2 && len(sink.deliveries("/slack")) == 2
	})
	if err := json.Unmarshal(sink.deliveries("/json")[1].body, &ev); err != nil || ev.Type != webhook.EventQuestionReminder {
		t.Fatalf("reminder %s: %v", sink.deliveries("/json")[1].body, err)
	}
	// Answered: its timers end.
	if _, err := w.st.AnswerQuestion(ctx, store.Answer{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, QuestionID: id, Option: new(0)}); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM questions WHERE note_id = $1 AND timer = 'done' AND due_at IS NULL`, id); n != 1 {
		t.Fatal("an answered question still has a timer")
	}
}

// execSQL runs one statement on dsn.
func execSQL(t *testing.T, dsn, sql string, args ...any) {
	t.Helper()
	storetest.SQLAt(t, dsn).Exec(sql, args...)
}

// TestQuestionExpiryIsToldToTheWaitingAgent: a question that expires while
// its agent waits ends the call as expired, with no answer; the agent's
// mail then holds osFoundry's "no decision" reply, and its events
// question_expired.
func TestQuestionExpiryIsToldToTheWaitingAgent(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	r := startReplica(t, dsn, "")
	r.waitReady()
	w := newWorld(t, dsn, r.URL, 1)
	reply := askAsync(t, r.URL, w.tokens[0], w.ask("exp-1", "Drop the legacy table?", "wait_seconds", 60))
	id := questionByText(t, dsn, "Drop the legacy table?")
	execSQL(t, dsn, `UPDATE questions SET timer = 'expiry', due_at = now() WHERE note_id = $1`, id)
	execSQL(t, dsn, `SELECT pg_notify($1, '')`, store.TimersChannel)
	var res *toolReply
	select {
	case res = <-reply:
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting call did not end at the expiry")
	}
	if res.isError || res.data["status"] != "expired" || res.data["answer"] != nil || res.data["answered_by"] != nil {
		t.Fatalf("ask_owner at the expiry: %+v", res)
	}
	mail, err := callTool(r.URL, w.tokens[0], "read_session_mail", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID})
	if err != nil || mail.isError {
		t.Fatalf("read_session_mail: %v %+v", err, mail)
	}
	notes, _ := mail.data["notes"].([]any)
	if len(notes) == 0 {
		t.Fatalf("no mail: %+v", mail.data)
	}
	notice := notes[0].(map[string]any)
	answers, _ := notice["answers"].(map[string]any)
	if notice["from_kind"] != "osfoundry" || answers["status"] != "expired" || !strings.Contains(notice["body"].(string), "No decision") {
		t.Fatalf("the expiry notice: %+v", notice)
	}
	ev, err := callTool(r.URL, w.tokens[0], "poll_resource_events", map[string]any{"resource_type": w.session.Type, "resource_id": w.session.PublicID, "after_sequence": 0})
	if err != nil || !strings.Contains(fmt.Sprint(ev.data["events"]), "question_expired") {
		t.Fatalf("events: %v %+v", err, ev)
	}
}

// TestQuestionTimersSurviveKill9: questions asked just before kill -9 of
// the server, with their notices pending and two expiries due, each fire
// once after a restart, with two replicas running the timers.
func TestQuestionTimersSurviveKill9(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	addr := freePort(t)
	base := "http://" + addr
	r := startWebhookReplica(t, dsn, base, "--addr", addr)
	r.waitReady()
	w := newWorld(t, dsn, base, 1)
	ctx := context.Background()
	// Normal questions: 2 minutes, two seconds on the test server.
	if err := w.st.SetProjectQuestionSettings(ctx, w.owner.WorkspaceID, w.session.ProjectID, store.QuestionSettings{BlockingMinutes: 2, NormalMinutes: 2, ExpiryHours: 24}); err != nil {
		t.Fatal(err)
	}
	sink := newQuestionSink(t)
	sink.endpoint(t, w, "/json", store.WebhookJSON)
	var ids []int64
	for i := range 6 {
		res, err := callTool(base, w.tokens[0], "ask_owner", w.ask(fmt.Sprint("kill-", i), fmt.Sprint("Question ", i)))
		if err != nil || res.isError {
			t.Fatalf("ask_owner: %v %+v", err, res)
		}
		ids = append(ids, int64(res.data["question_id"].(float64)))
	}
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.done
	if n := countRows(t, dsn, `SELECT count(*) FROM webhook_deliveries WHERE event = 'question'`); n != 0 {
		t.Fatalf("%d notices fired before their delay", n)
	}
	// While it is down, two of them reach their expiry.
	execSQL(t, dsn, `UPDATE questions SET timer = 'expiry', due_at = now() WHERE note_id = ANY($1)`, ids[4:])

	restarted := time.Now()
	a := startWebhookReplica(t, dsn, base, "--addr", addr)
	b := startWebhookReplica(t, dsn, base)
	a.waitReady()
	b.waitReady()
	awaitCond(t, 60*time.Second, "four notices and two expiries", func() bool {
		return len(sink.deliveries("/json")) >= 4 && countRows(t, dsn, `SELECT count(*) FROM questions WHERE state = 'expired'`) == 2
	})
	took := time.Since(restarted)
	// Each once: one delivery per notice, one notice per expiry.
	if n := countRows(t, dsn, `SELECT count(*) FROM (SELECT note_id FROM webhook_deliveries WHERE event = 'question' GROUP BY note_id HAVING count(*) = 1) x`); n != 4 {
		t.Fatalf("%d questions with exactly one notice, want 4", n)
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM notes WHERE sender_kind = 'system' AND in_reply_to = ANY($1)`, ids[4:]); n != 2 {
		t.Fatalf("%d expiry notices, want 2", n)
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM resource_events WHERE kind = 'question_expired'`); n != 2 {
		t.Fatalf("%d question_expired events, want 2", n)
	}
	var hookIDs []string
	for _, d := range sink.deliveries("/json") {
		hookIDs = append(hookIDs, d.header.Get("webhook-id"))
	}
	slices.Sort(hookIDs)
	if len(slices.Compact(hookIDs)) != 4 {
		t.Fatalf("webhook ids %v, want 4 distinct", hookIDs)
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM questions WHERE state = 'open' AND timer = 'reminder'`); n != 4 {
		t.Fatalf("%d open questions wait for their reminder, want 4", n)
	}
	t.Logf("kill -9 with 6 question timers pending: 4 notices and 2 expiries fired once each, %v after the restart of two replicas", took.Round(time.Millisecond))
}
