package email_test

import (
	"context"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/email"
	"github.com/osfoundry/osfoundry/email/mailpittest"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

const base = "https://foundry.example.com"

// world is a workspace with an owner, a project, a session and an agent
// invited to it, and a email sender running against a mailpit.
type world struct {
	st      *store.Store
	sql     *storetest.Fixtures
	owner   *store.Owner
	session *store.Session
	connID  int64
	mp      *mailpittest.Server
	sender  *email.Sender
}

// setup changes a world: where its sender sends (smtpURL; empty: a mailpit
// of its own, started with mailpitArgs) and its sender's options (tune).
type setup struct {
	smtpURL     string
	mailpitArgs []string
	tune        func(*email.Options)
}

func newWorld(t *testing.T, smtpURL string, mailpitArgs ...string) *world {
	t.Helper()
	return newWorldWith(t, setup{smtpURL: smtpURL, mailpitArgs: mailpitArgs})
}

func newWorldWith(t *testing.T, o setup) *world {
	t.Helper()
	smtpURL := o.smtpURL
	ctx := context.Background()
	w := &world{st: storetest.New(t)}
	w.sql = storetest.SQL(t, w.st)
	var err error
	if w.owner, err = w.st.CreateOwner(ctx, store.NewOwner{Email: "olive@example.com", DisplayName: "Olive Owner", Password: "long enough password"}); err != nil {
		t.Fatal(err)
	}
	p, err := w.st.CreateProject(ctx, w.owner.WorkspaceID, "Storefront")
	if err != nil {
		t.Fatal(err)
	}
	if w.session, err = w.st.CreateSession(ctx, store.NewSession{WorkspaceID: w.owner.WorkspaceID, ProjectID: p.ID, Type: "team_session", Title: "Checkout redesign"}); err != nil {
		t.Fatal(err)
	}
	c, err := w.st.CreateConnection(ctx, store.NewConnection{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, ClientName: "cli",
		Scopes: store.AllScopes, ProjectIDs: []int64{p.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.ClaimProfile(ctx, w.owner.WorkspaceID, c.ID, "ada", "Ada Agent"); err != nil {
		t.Fatal(err)
	}
	if err := w.st.Invite(ctx, w.owner.WorkspaceID, w.session.ID, c.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	w.connID = c.ID
	if smtpURL == "" {
		w.mp = mailpittest.Start(t, o.mailpitArgs...)
		smtpURL = w.mp.SMTPURL()
	}
	cfg, err := email.ParseSMTP(smtpURL, "osFoundry <osfoundry@example.com>")
	if err != nil {
		t.Fatal(err)
	}
	opts := email.FastOptions(email.Options{Store: w.st, SMTP: cfg, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if o.tune != nil {
		o.tune(&opts)
	}
	w.sender = email.New(opts, email.Composer{BaseURL: base})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() { w.sender.Run(runCtx); done <- struct{}{} }()
	go func() { w.sender.RunSweeps(runCtx); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done })
	return w
}

func (w *world) ask(t *testing.T, key, text string, options ...string) *store.Question {
	t.Helper()
	q, _, err := w.st.AskQuestion(context.Background(), store.AgentQuestion{WorkspaceID: w.owner.WorkspaceID, ConnectionID: w.connID,
		SessionType: w.session.Type, SessionID: w.session.PublicID, Text: text, Options: options, IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// fire makes the question's next timer due and fires it, emailing with the
// composer, and wakes the sender.
func (w *world) fire(t *testing.T, id int64) store.TimerResult {
	t.Helper()
	w.sql.Exec(`UPDATE questions SET due_at = now() - interval '1 second' WHERE note_id = $1`, id)
	r, err := w.st.FireQuestionTimers(context.Background(), 10, email.Composer{BaseURL: base}.Question)
	if err != nil {
		t.Fatal(err)
	}
	w.sender.Wake()
	return r
}

var answerLink = regexp.MustCompile(regexp.QuoteMeta(base) + `/answer/([0-9]+\.[A-Za-z0-9_-]+)`)

func TestQuestionEmailArrivesWhenTheTimerFires(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	ctx := context.Background()
	q := w.ask(t, "k1", "Ship <b>v2</b> & tag it?", "Yes, ship", "No")
	if r := w.fire(t, q.ID); r.Mails != 1 {
		t.Fatalf("fired %+v, want one mail", r)
	}
	m := w.mp.WaitFor(t, 1)[0]
	if m.Subject != "Question from Ada Agent: Ship <b>v2</b> & tag it?" {
		t.Errorf("subject %q", m.Subject)
	}
	if len(m.To) != 1 || m.To[0].Address != "olive@example.com" || m.To[0].Name != "Olive Owner" || m.From.Address != "osfoundry@example.com" {
		t.Errorf("to %+v from %+v", m.To, m.From)
	}
	for _, want := range []string{"Ada Agent (ext-ada) asks in Checkout redesign · Storefront", "> Ship <b>v2</b> & tag it?",
		"- \"Yes, ship\"\n", "- \"No\"\n", "Answer in your own words", base + "/sessions/", base + "/account"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
	if got := header(m, "Message-ID"); !strings.HasPrefix(got, "<osfoundry-mail-") || !strings.HasSuffix(got, "@example.com>") || header(m, "Auto-Submitted") != "auto-generated" {
		t.Errorf("Message-ID %q, Auto-Submitted %q", got, header(m, "Auto-Submitted"))
	}
	if strings.Contains(m.HTML, "<b>v2</b>") || !strings.Contains(m.HTML, "Ship &lt;b&gt;v2&lt;/b&gt; &amp; tag it?") {
		t.Errorf("the question is not escaped in the HTML:\n%s", m.HTML)
	}
	// The links of the text and the HTML are the same three: each option,
	// then free text, each answering as Olive.
	links := answerLink.FindAllStringSubmatch(m.Text, -1)
	if html := answerLink.FindAllStringSubmatch(m.HTML, -1); len(links) != 3 || !slices.EqualFunc(links, html, func(a, b []string) bool { return a[1] == b[1] }) {
		t.Fatalf("links in the text %v, in the HTML %v", links, html)
	}
	for i, l := range links {
		link, lq, err := w.st.AnswerLinkOf(ctx, l[1])
		if err != nil || lq.ID != q.ID || link.OwnerID != w.owner.ID {
			t.Fatalf("link %d: %+v %v", i, link, err)
		}
		if (i < 2) != (link.Option != nil) || (link.Option != nil && *link.Option != i) {
			t.Errorf("link %d answers with option %v", i, link.Option)
		}
	}
	if !strings.Contains(m.Text, "/sessions/"+itoa(w.session.ID)+"?note="+itoa(q.ID)) {
		t.Errorf("no link to the question on its session page:\n%s", m.Text)
	}

	// The reminder says it is one.
	if r := w.fire(t, q.ID); r.Mails != 1 {
		t.Fatalf("reminder fired %+v", r)
	}
	ms := w.mp.WaitFor(t, 2)
	if !strings.HasPrefix(ms[0].Subject, "Reminder: Question from Ada Agent") || !strings.HasPrefix(ms[0].Text, "Reminder: still waiting") {
		t.Errorf("reminder %q:\n%s", ms[0].Subject, ms[0].Text)
	}
	var state string
	w.sql.QueryRow(`SELECT string_agg(DISTINCT state, ',') FROM mail_outbox`).Scan(&state)
	if state != store.EmailSent {
		t.Errorf("outbox states %q, want sent", state)
	}
}

func TestRepliesAreEmailedToOwnersWhoOptedIn(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	ctx := context.Background()
	ws := w.owner.WorkspaceID
	quiet := w.sql.InsertOwner(ws, "Quiet Owner")
	if err := w.st.SetEmailSettings(ctx, ws, w.owner.ID, store.EmailSettings{Questions: true, Replies: true}); err != nil {
		t.Fatal(err)
	}
	for i, to := range []int64{w.owner.ID, quiet} {
		if _, _, err := w.st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: ws, ConnectionID: w.connID, SessionType: w.session.Type,
			SessionID: w.session.PublicID, To: store.OwnerSlug(to), Subject: "Tests pass", Body: "All **green** on <main>.", IdempotencyKey: "r" + itoa(int64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	w.sender.Wake()
	m := w.mp.WaitFor(t, 1)[0]
	if m.Subject != "Reply from Ada Agent: Tests pass" || len(m.To) != 1 || m.To[0].Address != "olive@example.com" {
		t.Fatalf("reply mail %q to %+v", m.Subject, m.To)
	}
	if !strings.Contains(m.HTML, "<strong>green</strong>") || strings.Contains(m.HTML, "<main>") || !strings.Contains(m.Text, "All **green** on <main>.") {
		t.Errorf("body: html %s\ntext %s", m.HTML, m.Text)
	}
	// Nothing for the owner who did not opt in, however long the sweeps run.
	var queued int
	w.sql.QueryRow(`SELECT count(*) FROM mail_outbox WHERE owner_id = $1`, quiet).Scan(&queued)
	if queued != 0 {
		t.Errorf("%d mails queued for the owner who did not opt in", queued)
	}
}

func TestDigestListsUnreadAgentNotes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	ctx := context.Background()
	ws := w.owner.WorkspaceID
	for i, subject := range []string{"Refunds done", "Orders total fixed"} {
		if _, _, err := w.st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: ws, ConnectionID: w.connID, SessionType: w.session.Type,
			SessionID: w.session.PublicID, Subject: subject, Body: "Details inside.", IdempotencyKey: "d" + itoa(int64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.st.SetEmailSettings(ctx, ws, w.owner.ID, store.EmailSettings{Questions: true, Digest: true}); err != nil {
		t.Fatal(err)
	}
	w.sql.Exec(`UPDATE owner_mail_settings SET digest_due_at = now() - interval '1 second' WHERE owner_id = $1`, w.owner.ID)
	m := w.mp.WaitFor(t, 1)[0]
	if m.Subject != "2 unread notes from your agents" || m.To[0].Address != "olive@example.com" {
		t.Fatalf("digest %q to %+v", m.Subject, m.To)
	}
	for _, want := range []string{"Refunds done", "Orders total fixed", "Ada Agent · Checkout redesign · Storefront", base + "/inbox"} {
		if !strings.Contains(m.Text, want) || !strings.Contains(m.HTML, want) {
			t.Errorf("digest lacks %q:\n%s", want, m.Text)
		}
	}
}

func TestEmailWaitsForTheSMTPServer(t *testing.T) {
	t.Parallel()
	port := mailpittest.FreePort(t)
	w := newWorld(t, "smtp://127.0.0.1:"+itoa(int64(port))+"?tls=none")
	q := w.ask(t, "k", "Deploy?", "Yes", "No")
	if r := w.fire(t, q.ID); r.Mails != 1 {
		t.Fatalf("fired %+v", r)
	}
	// Refused while no server listens: the message stays, to be retried.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var attempts int
		var state, lastErr string
		w.sql.QueryRow(`SELECT attempts, state, coalesce(last_error, '') FROM mail_outbox`).Scan(&attempts, &state, &lastErr)
		if attempts >= 2 && lastErr != "" {
			if state != store.EmailPending || !strings.Contains(lastErr, "connect to 127.0.0.1:"+itoa(int64(port))) {
				t.Fatalf("after %d attempts: %s, %q", attempts, state, lastErr)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed attempts recorded: %d %s %q", attempts, state, lastErr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d, err := w.st.EmailOutboxDepth(context.Background()); err != nil || d.Pending != 1 || d.Failed != 0 {
		t.Fatalf("outbox while the server is down: %+v %v", d, err)
	}
	mp := mailpittest.StartOn(t, port)
	m := mp.WaitFor(t, 1)[0]
	if m.Subject != "Question from Ada Agent: Deploy?" {
		t.Errorf("subject %q", m.Subject)
	}
	for {
		var state string
		w.sql.QueryRow(`SELECT state FROM mail_outbox`).Scan(&state)
		if state == store.EmailSent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outbox state %q after the server came up", state)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := len(mp.Messages(t)); got != 1 {
		t.Errorf("%d messages, want 1", got)
	}
	if d, err := w.st.EmailOutboxDepth(context.Background()); err != nil || d != (store.EmailOutboxDepth{}) {
		t.Errorf("outbox once sent: %+v %v", d, err)
	}
}

// TestRefusedRecipientIsMarkedFailed: a permanent refusal (5xx) is not
// retried; the row stays, failed, with the server's reason, and the other
// messages of the batch are sent.
func TestRefusedRecipientIsMarkedFailed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", "--smtp-allowed-recipients", `^olive@`)
	refused := w.sql.InsertOwner(w.owner.WorkspaceID, "Rex Refused")
	q := w.ask(t, "k", "Deploy?", "Yes", "No")
	if r := w.fire(t, q.ID); r.Mails != 2 {
		t.Fatalf("fired %+v, want two mails", r)
	}
	if m := w.mp.WaitFor(t, 1)[0]; m.To[0].Address != "olive@example.com" {
		t.Fatalf("mail to %+v", m.To)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var attempts int
		var state, lastErr string
		w.sql.QueryRow(`SELECT attempts, state, coalesce(last_error, '') FROM mail_outbox WHERE owner_id = $1`, refused).Scan(&attempts, &state, &lastErr)
		if state == store.EmailFailed {
			if attempts != 1 || !strings.Contains(lastErr, "550") {
				t.Fatalf("failed after %d attempts with %q, want 1 and the server's 550", attempts, lastErr)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the refused message is %s after %d attempts (%q)", state, attempts, lastErr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEmailOfAClosedQuestionIsSkipped: a question answered while its email
// waited for the SMTP server is not emailed when the server comes up.
func TestEmailOfAClosedQuestionIsSkipped(t *testing.T) {
	t.Parallel()
	port := mailpittest.FreePort(t)
	w := newWorld(t, "smtp://127.0.0.1:"+itoa(int64(port))+"?tls=none")
	ctx := context.Background()
	closed := w.ask(t, "k1", "Deploy?", "Yes", "No")
	open := w.ask(t, "k2", "Tag it?", "Yes", "No")
	if r := w.fire(t, closed.ID); r.Mails != 1 {
		t.Fatalf("fired %+v", r)
	}
	// The sender has tried the first email, so the second question's does
	// not fold into it (only an email never tried folds).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var attempts int
		w.sql.QueryRow(`SELECT attempts FROM mail_outbox WHERE note_id = $1`, closed.ID).Scan(&attempts)
		if attempts > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first email was never tried")
		}
	}
	if r := w.fire(t, open.ID); r.Mails != 1 {
		t.Fatalf("fired %+v", r)
	}
	one := 0
	if _, err := w.st.AnswerQuestion(ctx, store.Answer{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, QuestionID: closed.ID, Option: &one}); err != nil {
		t.Fatal(err)
	}
	mp := mailpittest.StartOn(t, port)
	if m := mp.WaitFor(t, 1)[0]; m.Subject != "Question from Ada Agent: Tag it?" {
		t.Fatalf("mailed %q", m.Subject)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var state string
		w.sql.QueryRow(`SELECT state FROM mail_outbox WHERE note_id = $1`, closed.ID).Scan(&state)
		if state == store.EmailSkipped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed question's mail is %s", state)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(mp.Messages(t)); n != 1 {
		t.Fatalf("%d messages, want only the open question's", n)
	}
}

// TestEmailGivesUpAfterItsAttempts: a server that never comes back leaves
// the message failed after its last attempt, with the error, in the outbox.
func TestEmailGivesUpAfterItsAttempts(t *testing.T) {
	t.Parallel()
	port := mailpittest.FreePort(t)
	w := newWorldWith(t, setup{smtpURL: "smtp://127.0.0.1:" + itoa(int64(port)) + "?tls=none", tune: func(o *email.Options) {
		o.MaxAttempts, o.MinBackoff, o.MaxBackoff = 3, 10*time.Millisecond, 20*time.Millisecond
	}})
	q := w.ask(t, "k", "Deploy?")
	if r := w.fire(t, q.ID); r.Mails != 1 {
		t.Fatalf("fired %+v", r)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var attempts int
		var state, lastErr string
		w.sql.QueryRow(`SELECT attempts, state, coalesce(last_error, '') FROM mail_outbox`).Scan(&attempts, &state, &lastErr)
		if state == store.EmailFailed {
			if attempts != 3 || !strings.Contains(lastErr, "connect to 127.0.0.1") {
				t.Fatalf("failed after %d attempts with %q, want 3", attempts, lastErr)
			}
			if d, err := w.st.EmailOutboxDepth(context.Background()); err != nil || d.Failed != 1 || d.Pending != 0 {
				t.Fatalf("outbox after giving up: %+v %v", d, err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the message is %s after %d attempts (%q)", state, attempts, lastErr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestComposeFreeTextQuestion: a question without options has the one link
// for an answer in the owner's own words; links that do not match the
// options are a composing error, not a email with wrong links.
func TestComposeFreeTextQuestion(t *testing.T) {
	t.Parallel()
	c := email.Composer{BaseURL: base}
	q := &store.DueQuestion{Question: store.Question{ID: 7, SessionID: 3, Text: "Which cache?", Urgency: store.UrgencyNormal,
		ExpiresAt: time.Now().Add(time.Hour)}, Timer: "notice", SessionTitle: "S", ProjectName: "P", AskerName: "Ada", AskerSlug: "ext-ada"}
	m, err := c.Question(store.EmailTo{}, []store.QuestionEmailItem{{DueQuestion: q, Links: []string{"9.tok"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, "Write your answer:\n  "+base+"/answer/9.tok\n") || strings.Contains(m.Text, "one click") ||
		!strings.Contains(m.HTML, `href="`+base+`/answer/9.tok"`) {
		t.Errorf("free-text question:\n%s\n%s", m.Text, m.HTML)
	}
	// The links expire with the question when it expires first.
	if !strings.Contains(m.Text, "until "+q.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC")) {
		t.Errorf("the links' end is not the question's expiry:\n%s", m.Text)
	}
	if _, err := c.Question(store.EmailTo{}, []store.QuestionEmailItem{{DueQuestion: q, Links: []string{"9.tok", "10.tok"}}}); err == nil {
		t.Error("two links for a question without options composed")
	}
}

func TestParseSMTP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url, from string
		want      email.SMTP
		err       string
	}{
		{url: "smtp://u:p%40ss@mail.example:2525", from: "a@example.com", want: email.SMTP{Host: "mail.example", Port: 2525, TLS: email.TLSStartTLS, Username: "u", Password: "p@ss", From: "<a@example.com>"}},
		{url: "smtp://mail.example?tls=none", from: "osFoundry <a@example.com>", want: email.SMTP{Host: "mail.example", Port: 25, TLS: email.TLSNone, From: `"osFoundry" <a@example.com>`}},
		{url: "smtp://mail.example", from: "a@example.com", want: email.SMTP{Host: "mail.example", Port: 587, TLS: email.TLSStartTLS, From: "<a@example.com>"}},
		{url: "smtps://u:p@mail.example", from: "a@example.com", want: email.SMTP{Host: "mail.example", Port: 465, TLS: email.TLSImplicit, Username: "u", Password: "p", From: "<a@example.com>"}},
		{url: "http://mail.example", from: "a@example.com", err: `scheme "http"`},
		{url: "smtp://mail.example?tls=maybe", from: "a@example.com", err: `tls="maybe"`},
		{url: "smtps://mail.example?tls=none", from: "a@example.com", err: "smtps:// always speaks TLS"},
		{url: "smtp://mail.example:99999", from: "a@example.com", err: `port "99999"`},
		{url: "smtp://:25", from: "a@example.com", err: "no host"},
		{url: "smtp://mail.example?debug=1", from: "a@example.com", err: `unknown parameter "debug"`},
		{url: "smtp://mail.example", from: "", err: "not an address"},
		{url: "smtp://mail.example", from: "not an address", err: "not an address"},
	} {
		got, err := email.ParseSMTP(c.url, c.from)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s %q: %v, want an error with %q", c.url, c.from, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s %q: %+v %v, want %+v", c.url, c.from, got, err, c.want)
		case err != nil && strings.Contains(err.Error(), "p%40ss"):
			t.Errorf("the error repeats the password: %v", err)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// header is a header of a message, whatever the case of its name.
func header(m mailpittest.Message, name string) string {
	for k, v := range m.Headers {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}
