package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/email/mailpittest"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestSMTPConfig: email is off, and said so, without --smtp-url; the URL and
// the sender are checked with errors naming the flag and never the
// password; the start log masks the password, and warns when it was given
// on the command line.
func TestSMTPConfig(t *testing.T) {
	t.Setenv("OSFOUNDRY_SMTP_URL", "")
	t.Setenv("OSFOUNDRY_SMTP_FROM", "")
	logOf := func(c config) string {
		var out bytes.Buffer
		c.log(slog.New(slog.NewTextHandler(&out, nil)))
		return out.String()
	}
	c := parseConfig(t)
	if err := c.finish(); err != nil || c.smtp != nil {
		t.Fatalf("without --smtp-url: %v %+v", err, c.smtp)
	}
	if out := logOf(c); !strings.Contains(out, "email off: --smtp-url (OSFOUNDRY_SMTP_URL) is not set") || !strings.Contains(out, "smtp=off") {
		t.Fatalf("the start log does not say email is off:\n%s", out)
	}

	for _, bad := range []struct{ url, from, want string }{
		{"smtp://u:hunter22@mail.example?tls=maybe", "a@example.com", `--smtp-url: tls="maybe"`},
		{"mailto:u:hunter22@mail.example", "a@example.com", `--smtp-url: scheme "mailto"`},
		{"smtp://u:hunter22@mail.example", "", "--smtp-from: give the sender address"},
		{"smtp://u:hunter22@mail.example", "nobody", `--smtp-from: "nobody" is not an address`},
	} {
		c := parseConfig(t, "--smtp-url", bad.url, "--smtp-from", bad.from)
		err := c.finish()
		if err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "hunter22") {
			t.Errorf("%s %q: %v, want an error with %q and no password", bad.url, bad.from, err, bad.want)
		}
	}

	t.Setenv("OSFOUNDRY_SMTP_URL", "smtp://osf:hunter22@mail.example:2525")
	t.Setenv("OSFOUNDRY_SMTP_FROM", "osFoundry <osf@example.com>")
	c = parseConfig(t)
	if err := c.finish(); err != nil || c.smtp == nil || c.smtp.Password != "hunter22" || c.smtp.Port != 2525 || c.smtp.From != `"osFoundry" <osf@example.com>` {
		t.Fatalf("from the environment: %v %+v", err, c.smtp)
	}
	out := logOf(c)
	if strings.Contains(out, "hunter22") || !strings.Contains(out, "smtp=smtp://osf:****@mail.example:2525") || strings.Contains(out, "email off") {
		t.Fatalf("the start log does not mask the SMTP password:\n%s", out)
	}
	if strings.Contains(out, "command line") {
		t.Fatalf("warned of a flag that was not given:\n%s", out)
	}

	fs := flagSetOf(t, &c, "--smtp-url", "smtp://osf:hunter22@mail.example")
	c.noteSecretFlags(fs)
	if out := logOf(c); !strings.Contains(out, "--smtp-url was given on the command line") || !strings.Contains(out, "set OSFOUNDRY_SMTP_URL instead") {
		t.Fatalf("no warning of the password on the command line:\n%s", out)
	}
}

// TestServerEmailsOwnersOverSMTP: a server started with --smtp-url sends
// the replies an owner opted in to to a real SMTP server, with links to its
// base URL; its log never shows the password.
func TestServerEmailsOwnersOverSMTP(t *testing.T) {
	t.Parallel()
	mp := mailpittest.Start(t)
	dsn := storetest.NewDatabase(t)
	base := "http://" + freePort(t)
	r := startTestReplica(t, dsn, base, "--smtp-url", mp.SMTPURL(), "--smtp-from", "osFoundry <osfoundry@example.com>")
	r.waitReady()
	w := newWorld(t, dsn, base, 1)
	ctx := context.Background()
	if err := w.st.SetEmailSettings(ctx, w.owner.WorkspaceID, w.owner.ID, store.EmailSettings{Questions: true, Replies: true}); err != nil {
		t.Fatal(err)
	}
	rep, err := callTool(r.URL, w.tokens[0], "reply_to_sender", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID,
		"to": store.OwnerSlug(w.owner.ID), "subject": "Refunds shipped", "body": "Merged as **#42**.", "idempotency_key": "k1"})
	if err != nil || rep.isError {
		t.Fatalf("reply_to_sender: %v %s", err, rep.text)
	}
	m := mp.WaitFor(t, 1)[0]
	if m.Subject != "Reply from Agent: Refunds shipped" || len(m.To) != 1 || m.To[0].Address != w.owner.Email {
		t.Fatalf("mail %q to %+v", m.Subject, m.To)
	}
	if !strings.Contains(m.Text, base+"/sessions/") || !strings.Contains(m.HTML, "<strong>#42</strong>") {
		t.Errorf("mail body:\n%s\n%s", m.Text, m.HTML)
	}
	logs := r.logs.String()
	if strings.Contains(logs, "s3cret-pass") || !strings.Contains(logs, "osfoundry:****@127.0.0.1") || strings.Contains(logs, "email off") {
		t.Errorf("the log shows the SMTP password, or no masked URL:\n%s", logs)
	}
}

// flagSetOf registers the server's flags on a fresh c and parses args,
// returning the flag set (which noteSecretFlags reads).
func flagSetOf(t *testing.T, c *config, args ...string) *flag.FlagSet {
	t.Helper()
	*c = config{}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestServerEmailsQuestionsAndTheLinkAnswers: a blocking question nobody
// answered on the page is mailed after its delay (a minute lasts a second
// here), and the mail's link answers it after one click: the GET asks, the
// POST answers as the owner mailed, once.
func TestServerEmailsQuestionsAndTheLinkAnswers(t *testing.T) {
	t.Parallel()
	mp := mailpittest.Start(t)
	dsn := storetest.NewDatabase(t)
	base := "http://" + freePort(t)
	r := startTestReplica(t, dsn, base, "--smtp-url", mp.SMTPURL(), "--smtp-from", "osfoundry@example.com")
	r.waitReady()
	w := newWorld(t, dsn, base, 1)
	rep, err := callTool(r.URL, w.tokens[0], "ask_owner", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID,
		"question": "Deploy to production now?", "options": []string{"Deploy", "Wait"}, "urgency": "blocking", "idempotency_key": "q1"})
	if err != nil || rep.isError {
		t.Fatalf("ask_owner: %v %s", err, rep.text)
	}
	m := mp.WaitFor(t, 1)[0]
	if m.Subject != "[blocking] Question from Agent: Deploy to production now?" || m.To[0].Address != w.owner.Email {
		t.Fatalf("mail %q to %+v", m.Subject, m.To)
	}
	link := regexp.MustCompile(regexp.QuoteMeta(base)+`/answer/[0-9]+\.[A-Za-z0-9_-]+`).FindAllString(m.Text, -1)
	if len(link) != 3 {
		t.Fatalf("links %v in\n%s", link, m.Text)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	open := strings.Replace(link[0], base, r.URL, 1)
	res, err := browser.Get(open)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	csrf := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(page)
	if res.StatusCode != http.StatusOK || csrf == nil || !strings.Contains(string(page), "Answer “Deploy”") {
		t.Fatalf("GET %s: %d\n%s", open, res.StatusCode, page)
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM questions WHERE state = 'open'`); n != 1 {
		t.Fatalf("%d open questions after the GET, want 1", n)
	}
	for i, want := range []int{http.StatusOK, http.StatusConflict} {
		res, err := browser.PostForm(open, url.Values{"_csrf": {string(csrf[1])}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("POST %d: %d, want %d", i+1, res.StatusCode, want)
		}
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM questions WHERE state = 'answered' AND answer = 'Deploy' AND answered_by = $1`, w.owner.ID); n != 1 {
		t.Fatal("the question is not answered Deploy by the owner")
	}
}

// TestServerWithoutSMTPEmailsNothing: without --smtp-url the log says email
// is off, and a question whose notice fires queues no mail and mints no
// answer link.
func TestServerWithoutSMTPEmailsNothing(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	base := "http://" + freePort(t)
	r := startTestReplica(t, dsn, base)
	r.waitReady()
	r.waitLog("email off: --smtp-url (OSFOUNDRY_SMTP_URL) is not set")
	w := newWorld(t, dsn, base, 1)
	rep, err := callTool(r.URL, w.tokens[0], "ask_owner", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID,
		"question": "Deploy?", "options": []string{"Yes", "No"}, "urgency": "blocking", "idempotency_key": "q1"})
	if err != nil || rep.isError {
		t.Fatalf("ask_owner: %v %s", err, rep.text)
	}
	awaitCond(t, 30*time.Second, "the question's notice", func() bool {
		return countRows(t, dsn, `SELECT count(*) FROM questions WHERE timer <> 'notice'`) == 1
	})
	if n := countRows(t, dsn, `SELECT count(*) FROM mail_outbox`) + countRows(t, dsn, `SELECT count(*) FROM answer_links`); n != 0 {
		t.Fatalf("%d mails and answer links with email off", n)
	}
}

// TestServerEmailsApprovalsAndTheLinksDecide: an approval nobody decided
// within its project's delay (0 by default) is mailed with an Allow and a
// Deny link; the GET of one asks, the POST denies with the reason as the
// owner mailed, once.
func TestServerEmailsApprovalsAndTheLinksDecide(t *testing.T) {
	t.Parallel()
	mp := mailpittest.Start(t)
	dsn := storetest.NewDatabase(t)
	base := "http://" + freePort(t)
	r := startTestReplica(t, dsn, base, "--smtp-url", mp.SMTPURL(), "--smtp-from", "osfoundry@example.com")
	r.waitReady()
	w := newWorld(t, dsn, base, 1)
	if rep, err := callTool(r.URL, w.tokens[0], "post_session_note", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID,
		"subject": "On it", "body": "Working.", "idempotency_key": "n1"}); err != nil || rep.isError {
		t.Fatalf("post_session_note: %v %s", err, rep.text)
	}
	req, _ := http.NewRequest(http.MethodPost, r.URL+"/agent/approvals", strings.NewReader(`{"tool":"Bash","summary":"npm publish","repo":"acme/shop","branch":"main"}`))
	req.Header.Set("Authorization", "Bearer "+w.tokens[0])
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /agent/approvals: %d", res.StatusCode)
	}
	m := mp.WaitFor(t, 1)[0]
	if !strings.Contains(m.Subject, "asks to run `npm publish` in acme/shop main") || m.To[0].Address != w.owner.Email {
		t.Fatalf("mail %q to %+v", m.Subject, m.To)
	}
	links := regexp.MustCompile(regexp.QuoteMeta(base)+`/approve/[0-9]+\.[A-Za-z0-9_-]+`).FindAllString(m.Text, -1)
	if len(links) != 2 {
		t.Fatalf("links %v in\n%s", links, m.Text)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	deny := strings.Replace(links[1], base, r.URL, 1)
	res, err = browser.Get(deny)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	csrf := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(page)
	if res.StatusCode != http.StatusOK || csrf == nil || !strings.Contains(string(page), "approval-link-reason") {
		t.Fatalf("GET %s: %d\n%s", deny, res.StatusCode, page)
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM approvals WHERE state = 'pending'`); n != 1 {
		t.Fatalf("%d pending approvals after the GET, want 1", n)
	}
	for i, want := range []int{http.StatusOK, http.StatusConflict} {
		res, err := browser.PostForm(deny, url.Values{"_csrf": {string(csrf[1])}, "reason": {"Not from a laptop"}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("POST %d: %d, want %d", i+1, res.StatusCode, want)
		}
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM approvals WHERE state = 'denied' AND reason = 'Not from a laptop' AND decided_by = $1`, w.owner.ID); n != 1 {
		t.Fatal("the approval is not denied by the owner with the reason")
	}
}
