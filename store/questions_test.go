package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// ask posts a question as ask_owner does.
func (f *mailFixture) ask(t *testing.T, key, text string, options ...string) *store.Question {
	t.Helper()
	q, dup, err := f.st.AskQuestion(context.Background(), store.AgentQuestion{WorkspaceID: f.owner.WorkspaceID, ConnectionID: f.connID,
		SessionType: f.sess.Type, SessionID: f.sess.PublicID, Text: text, Options: options, IdempotencyKey: key})
	if err != nil || dup {
		t.Fatalf("ask %q: %v (duplicate %v)", text, err, dup)
	}
	return q
}

func TestAskQuestionIsAnIdempotentNoteToTheOwners(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	q := f.ask(t, "k1", "Which database?", "PostgreSQL", "SQLite")
	if q.State != store.QuestionOpen || q.Urgency != store.UrgencyNormal || q.Text != "Which database?" || len(q.Options) != 2 {
		t.Fatalf("asked: %+v", q)
	}
	in := store.AgentQuestion{WorkspaceID: f.owner.WorkspaceID, ConnectionID: f.connID, SessionType: f.sess.Type, SessionID: f.sess.PublicID,
		Text: "Which database?", Options: []string{"PostgreSQL", "SQLite"}, IdempotencyKey: "k1"}
	again, dup, err := f.st.AskQuestion(ctx, in)
	if err != nil || !dup || again.ID != q.ID {
		t.Fatalf("retry: %+v %v %v, want the first question again", again, dup, err)
	}
	for name, change := range map[string]func(*store.AgentQuestion){
		"other options": func(a *store.AgentQuestion) { a.Options = []string{"PostgreSQL"} },
		"other urgency": func(a *store.AgentQuestion) { a.Urgency = store.UrgencyBlocking },
		"other text":    func(a *store.AgentQuestion) { a.Text = "Which cache?" },
	} {
		a := in
		change(&a)
		if _, _, err := f.st.AskQuestion(ctx, a); !errors.Is(err, store.ErrQuestionKeyReused) {
			t.Errorf("%s with the same key: %v, want ErrQuestionKeyReused", name, err)
		}
	}
	// A note's key is not a question's.
	if _, _, err := f.st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: f.owner.WorkspaceID, ConnectionID: f.connID,
		SessionType: f.sess.Type, SessionID: f.sess.PublicID, Body: "Which database?", IdempotencyKey: "k1"}); !errors.Is(err, store.ErrKeyReused) {
		t.Errorf("a note with a question's key: %v", err)
	}
	for name, a := range map[string]store.AgentQuestion{
		"blank":          {Text: "  "},
		"long":           {Text: strings.Repeat("x", store.MaxQuestionLen+1)},
		"six options":    {Text: "q", Options: []string{"a", "b", "c", "d", "e", "f"}},
		"blank option":   {Text: "q", Options: []string{"a", " "}},
		"long option":    {Text: "q", Options: []string{strings.Repeat("o", store.MaxOptionLen+1)}},
		"same twice":     {Text: "q", Options: []string{"a", "a"}},
		"urgent":         {Text: "q", Urgency: "urgent"},
		"no key":         {Text: "q"},
		"key too long":   {Text: "q", IdempotencyKey: strings.Repeat("k", store.MaxIdempotencyKeyLen+1)},
		"not in session": {Text: "q", IdempotencyKey: "x", SessionID: "nope"},
	} {
		if a.IdempotencyKey == "" && name != "no key" {
			a.IdempotencyKey = name
		}
		if a.SessionID == "" {
			a.SessionID = f.sess.PublicID
		}
		a.WorkspaceID, a.ConnectionID, a.SessionType = f.owner.WorkspaceID, f.connID, f.sess.Type
		if _, _, err := f.st.AskQuestion(ctx, a); err == nil {
			t.Errorf("%s: asked", name)
		}
	}

	// Owners find it in the inbox, among the questions waiting.
	waiting, err := f.st.Inbox(ctx, f.owner.WorkspaceID, f.owner.ID, store.InboxFilter{Questions: true}, 10)
	if err != nil || len(waiting) != 1 || waiting[0].ID != q.ID || waiting[0].Question == nil || waiting[0].Question.State != store.QuestionOpen {
		t.Fatalf("questions waiting: %+v %v", waiting, err)
	}
	open, err := f.st.OpenQuestions(ctx, f.owner.WorkspaceID, 0, 0, 10)
	if err != nil || len(open) != 1 || open[0].Question.Options[1] != "SQLite" {
		t.Fatalf("open questions: %+v %v", open, err)
	}
}

func TestTheFirstAnswerWins(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	otto := storetest.SQL(t, f.st).InsertOwner(ws, "Otto")
	q := f.ask(t, "k", "Ship it?", "Yes", "No")

	// Two owners answer at once, many times over: exactly one wins each.
	for round := range 5 {
		q := q
		if round > 0 {
			q = f.ask(t, "k"+string(rune('a'+round)), "Again?", "Yes", "No")
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, owner := range []int64{f.owner.ID, otto} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = f.st.AnswerQuestion(ctx, store.Answer{WorkspaceID: ws, OwnerID: owner, QuestionID: q.ID, Option: new(i)})
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			var closed *store.ErrClosed
			switch {
			case err == nil:
				won++
			case errors.As(err, &closed):
				if closed.Question.AnsweredBy == "" || !strings.Contains(err.Error(), "answered this question already") {
					t.Errorf("the later answer's refusal: %v", err)
				}
			default:
				t.Fatalf("answer: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d answers won, want 1 (%v)", round, won, errs)
		}
		n := 0
		if err := storetest.SQL(t, f.st).QueryRow(`SELECT count(*) FROM notes WHERE in_reply_to = $1`, q.ID).Scan(&n); err != nil || n != 1 {
			t.Fatalf("round %d: %d answer notes, want 1 (%v)", round, n, err)
		}
	}

	got, err := f.st.AgentQuestion(ctx, ws, f.connID, q.ID)
	if err != nil || got.State != store.QuestionAnswered || (got.Answer != "Yes" && got.Answer != "No") || got.ClosedAt == nil {
		t.Fatalf("answered question: %+v %v", got, err)
	}
	// The answer is a reply to the agent, in answer to the question, unread
	// for the agent, and the session's events say so.
	mail, unread, err := f.st.ReadAgentMail(ctx, ws, f.connID, f.sess.Type, f.sess.PublicID, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	var answer *store.AgentMailNote
	for i := range mail {
		if mail[i].InReplyTo != nil && *mail[i].InReplyTo == q.ID {
			answer = &mail[i]
		}
	}
	if answer == nil || !answer.Addressed || answer.MessageType != store.MessageReply || answer.Body != got.Answer || *answer.RecipientSlug != "ext-ada" {
		t.Fatalf("the answer in the agent's mail: %+v", answer)
	}
	if unread.Total != 0 {
		t.Errorf("after reading, %d unread", unread.Total)
	}
	events, _, err := f.st.PollEvents(ctx, ws, f.connID, f.sess.Type, f.sess.PublicID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, e := range events {
		if e.Kind == "question_answered" {
			answered++
		}
	}
	if answered != 5 {
		t.Errorf("%d question_answered events, want 5", answered)
	}
	// Bad answers.
	q2 := f.ask(t, "k2", "Free text?")
	for name, a := range map[string]store.Answer{
		"an option of a free-text question": {Option: new(0)},
		"blank":                             {Text: " "},
		"another workspace's owner":         {Text: "x", OwnerID: -1},
	} {
		a.WorkspaceID, a.QuestionID = ws, q2.ID
		if a.OwnerID == 0 {
			a.OwnerID = f.owner.ID
		}
		if a.OwnerID == -1 {
			_, other := storetest.SQL(t, f.st).InsertWorkspace("elsewhere")
			a.OwnerID = other
		}
		if _, err := f.st.AnswerQuestion(ctx, a); err == nil {
			t.Errorf("%s: answered", name)
		}
	}
	if _, err := f.st.AnswerQuestion(ctx, store.Answer{WorkspaceID: ws, OwnerID: f.owner.ID, QuestionID: q.ID + 1000, Text: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("no such question: %v", err)
	}
	if _, err := f.st.AnswerQuestion(ctx, store.Answer{WorkspaceID: ws, OwnerID: f.owner.ID, QuestionID: q2.ID, Text: "Use Go."}); err != nil {
		t.Fatalf("free text: %v", err)
	}
}

// dueNow moves a question's next timer to now: the tests' clock.
func dueNow(t *testing.T, st *store.Store, id int64) {
	t.Helper()
	storetest.SQL(t, st).Exec(`UPDATE questions SET due_at = now() - interval '1 second' WHERE note_id = $1`, id)
}

func TestQuestionTimersReachOwnersRemindAndExpire(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	sql := storetest.SQL(t, f.st)
	if _, _, err := f.st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: ws, ProjectID: f.sess.ProjectID,
		URL: "https://hooks.example.com/a", Kind: store.WebhookJSON}); err != nil {
		t.Fatal(err)
	}
	quiet := sql.InsertOwner(ws, "Quiet")
	if err := f.st.SetEmailSettings(ctx, ws, quiet, store.EmailSettings{}); err != nil {
		t.Fatal(err)
	}
	q := f.ask(t, "k", "Merge now?", "Yes", "No")
	deliveries := func(event string) int {
		var n int
		if err := sql.QueryRow(`SELECT count(*) FROM webhook_deliveries WHERE note_id = $1 AND event = $2`, q.ID, event).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if deliveries("note") != 0 {
		t.Fatal("the question went to the webhooks as a note at once")
	}
	var mailed []string
	compose := func(to store.EmailTo, items []store.QuestionEmailItem) (store.Email, error) {
		if len(items) != 1 {
			t.Fatalf("compose %d questions", len(items))
		}
		d, links := items[0].DueQuestion, items[0].Links
		if len(links) != 3 || d.ID != q.ID || d.AskerSlug != "ext-ada" {
			t.Errorf("compose %+v with %d links", d, len(links))
		}
		mailed = append(mailed, d.Timer+":"+to.Name)
		return store.Email{Subject: "Question", Text: "t", HTML: "<p>t</p>"}, nil
	}
	fire := func() store.TimerResult {
		t.Helper()
		r, err := f.st.FireQuestionTimers(ctx, 10, compose)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := fire(); r.Fired != 0 {
		t.Fatalf("fired before the delay: %+v", r)
	}
	wait, pending, err := f.st.NextQuestionTimer(ctx)
	if err != nil || !pending || wait < 14*60e9 || wait > 15*60e9 {
		t.Fatalf("next timer in %v (%v %v), want about 15 min (a normal question)", wait, pending, err)
	}

	dueNow(t, f.st, q.ID)
	if r := fire(); r.Fired != 1 || r.Deliveries != 1 || r.Mails != 1 || deliveries("question") != 1 {
		t.Fatalf("notice: %+v, %d question deliveries", r, deliveries("question"))
	}
	if len(mailed) != 1 || mailed[0] != "notice:Olive" {
		t.Fatalf("mailed %v: the owner who turned questions off got one, or Olive did not", mailed)
	}
	var links int
	if err := sql.QueryRow(`SELECT count(*) FROM answer_links WHERE question_id = $1`, q.ID).Scan(&links); err != nil || links != 3 {
		t.Fatalf("%d answer links, want 3: one per option and one for free text (%v)", links, err)
	}
	if r := fire(); r.Fired != 0 {
		t.Fatalf("the notice fired twice: %+v", r)
	}

	dueNow(t, f.st, q.ID)
	if r := fire(); r.Fired != 1 || deliveries("reminder") != 1 || len(mailed) != 2 || mailed[1] != "reminder:Olive" {
		t.Fatalf("reminder: %+v, mailed %v", r, mailed)
	}
	dueNow(t, f.st, q.ID)
	if r := fire(); r.Fired != 1 || r.Expired != 1 {
		t.Fatalf("expiry: %+v", r)
	}
	if r := fire(); r.Fired != 0 {
		t.Fatalf("fired after the expiry: %+v", r)
	}
	got, err := f.st.AgentQuestion(ctx, ws, f.connID, q.ID)
	if err != nil || got.State != store.QuestionExpired {
		t.Fatalf("expired: %+v %v", got, err)
	}
	// osFoundry's reply tells the agent: unread mail for it.
	mail, _, err := f.st.ReadAgentMail(ctx, ws, f.connID, f.sess.Type, f.sess.PublicID, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	if n := mail[0]; n.SenderKind != store.SenderSystem || !n.Addressed || n.InReplyTo == nil || *n.InReplyTo != q.ID || !strings.Contains(n.Body, "No decision") {
		t.Fatalf("the expiry notice: %+v", n)
	}
	// An answer after the expiry is refused.
	var closed *store.ErrClosed
	if _, err := f.st.AnswerQuestion(ctx, store.Answer{WorkspaceID: ws, OwnerID: f.owner.ID, QuestionID: q.ID, Option: new(0)}); !errors.As(err, &closed) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("answer after expiry: %v", err)
	}

	// An answered question's timers are over.
	q2 := f.ask(t, "k2", "Rebase?", "Yes")
	if _, err := f.st.AnswerQuestion(ctx, store.Answer{WorkspaceID: ws, OwnerID: f.owner.ID, QuestionID: q2.ID, Option: new(0)}); err != nil {
		t.Fatal(err)
	}
	if _, pending, _ := f.st.NextQuestionTimer(ctx); pending {
		t.Fatal("an answered question still has a timer")
	}
}

func TestQuestionTimersFireOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	if _, _, err := f.st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: f.owner.WorkspaceID, ProjectID: f.sess.ProjectID,
		URL: "https://hooks.example.com/a", Kind: store.WebhookJSON}); err != nil {
		t.Fatal(err)
	}
	other, err := store.Open(ctx, storetest.SQL(t, f.st).DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// As many questions as one agent may have open, asked as fast as they go.
	if err := f.st.SetProjectWriteLimits(ctx, f.owner.WorkspaceID, f.sess.ProjectID, store.WriteLimits{PerMinute: store.MaxWritesPerMinute, Burst: store.MaxWriteBurst}); err != nil {
		t.Fatal(err)
	}
	const n = store.MaxOpenQuestions
	for i := range n {
		q := f.ask(t, "k"+string(rune('A'+i)), "q")
		dueNow(t, f.st, q.ID)
	}
	var mu sync.Mutex
	fired := 0
	var wg sync.WaitGroup
	for _, st := range []*store.Store{f.st, other, f.st, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r, err := st.FireQuestionTimers(ctx, 3, nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				fired += r.Fired
				mu.Unlock()
				if r.Fired == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	var deliveries int
	if err := storetest.SQL(t, f.st).QueryRow(`SELECT count(*) FROM webhook_deliveries WHERE event = 'question'`).Scan(&deliveries); err != nil {
		t.Fatal(err)
	}
	if fired != n || deliveries != n {
		t.Fatalf("%d timers fired and %d deliveries for %d questions, want each once", fired, deliveries, n)
	}
}

func TestAnswerLinks(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	sql := storetest.SQL(t, f.st)
	ask := func(key string, options ...string) (*store.Question, []string) {
		q := f.ask(t, key, "Which?", options...)
		dueNow(t, f.st, q.ID)
		var tokens []string
		if _, err := f.st.FireQuestionTimers(ctx, 10, func(_ store.EmailTo, items []store.QuestionEmailItem) (store.Email, error) {
			for _, it := range items { // the questions before it fold into the same mail
				if it.ID == q.ID {
					tokens = it.Links
				}
			}
			return store.Email{Subject: "s", Text: "t", HTML: "h"}, nil
		}); err != nil {
			t.Fatal(err)
		}
		return q, tokens
	}
	q, tokens := ask("k1", "Left", "Right")
	l, lq, err := f.st.AnswerLinkOf(ctx, tokens[1])
	if err != nil || lq.ID != q.ID || l.Option == nil || *l.Option != 1 || l.OwnerID != f.owner.ID || l.WorkspaceID != ws {
		t.Fatalf("link: %+v %+v %v", l, lq, err)
	}
	// Forged and malformed tokens.
	for _, bad := range []string{"", "x", tokens[0] + "x", strings.Replace(tokens[0], ".", "9.", 1),
		tokens[0][:strings.Index(tokens[0], ".")+1] + strings.Repeat("A", 43)} {
		if _, _, err := f.st.AnswerLinkOf(ctx, bad); !errors.Is(err, store.ErrLinkInvalid) {
			t.Errorf("token %q: %v, want ErrLinkInvalid", bad, err)
		}
	}
	// A row changed under its token no longer matches it.
	sql.Exec(`UPDATE answer_links SET option_index = 0 WHERE id = $1`, l.ID)
	if _, _, err := f.st.AnswerLinkOf(ctx, tokens[1]); !errors.Is(err, store.ErrLinkInvalid) {
		t.Errorf("a changed row: %v", err)
	}
	sql.Exec(`UPDATE answer_links SET option_index = 1 WHERE id = $1`, l.ID)

	got, err := f.st.AnswerByLink(ctx, tokens[1], "")
	if err != nil || got.Answer != "Right" || got.AnsweredBy != "Olive" {
		t.Fatalf("answer by link: %+v %v", got, err)
	}
	if _, _, err := f.st.AnswerLinkOf(ctx, tokens[1]); !errors.Is(err, store.ErrLinkSpent) {
		t.Errorf("a used link: %v", err)
	}
	var closed *store.ErrClosed
	if _, err := f.st.AnswerByLink(ctx, tokens[0], ""); !errors.As(err, &closed) {
		t.Errorf("the other option's link after the answer: %v", err)
	}
	// A question with options has a free-text link too, last.
	if len(tokens) != 3 {
		t.Fatalf("links of a question with two options: %v, want one per option and one for free text", tokens)
	}
	if l, _, err := f.st.AnswerLinkOf(ctx, tokens[2]); err != nil || l.Option != nil {
		t.Fatalf("the free-text link of a question with options: %+v %v", l, err)
	}

	q2, tokens2 := ask("k2")
	if len(tokens2) != 1 {
		t.Fatalf("a free-text question's links: %v", tokens2)
	}
	sql.Exec(`UPDATE answer_links SET expires_at = now() - interval '1 second' WHERE question_id = $1`, q2.ID)
	if _, lq, err := f.st.AnswerLinkOf(ctx, tokens2[0]); !errors.Is(err, store.ErrLinkExpired) || lq.ID != q2.ID {
		t.Fatalf("an expired link: %v", err)
	}
	if _, err := f.st.AnswerByLink(ctx, tokens2[0], "late"); !errors.Is(err, store.ErrLinkExpired) {
		t.Fatalf("answer by an expired link: %v", err)
	}
	q3, tokens3 := ask("k3")
	if _, err := f.st.AnswerByLink(ctx, tokens3[0], " "); err == nil {
		t.Fatal("a blank free-text answer by link")
	}
	if got, err := f.st.AnswerByLink(ctx, tokens3[0], "Use the cache."); err != nil || got.ID != q3.ID || got.Answer != "Use the cache." {
		t.Fatalf("free text by link: %+v %v", got, err)
	}
	if _, err := f.st.AnswerByLink(ctx, tokens3[0], "again"); !errors.Is(err, store.ErrLinkSpent) {
		t.Fatalf("a replayed link: %v", err)
	}
}
