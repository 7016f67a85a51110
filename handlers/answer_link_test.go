package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// askWithLinks asks a question as the fixture's agent, fires its notice
// and returns the tokens of alice's answer links: one per option, then
// free text.
func (f *sessionFixture) askWithLinks(key, text string, options ...string) (*store.Question, []string) {
	t := f.app.t
	t.Helper()
	ctx := context.Background()
	q, _, err := f.app.store.AskQuestion(ctx, store.AgentQuestion{WorkspaceID: f.ag.workspaceID, ConnectionID: f.ag.connID,
		SessionType: f.session.Type, SessionID: f.session.PublicID, Text: text, Options: options, IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	f.app.sql().Exec(`UPDATE questions SET due_at = now() - interval '1 second' WHERE note_id = $1`, q.ID)
	var tokens []string
	if _, err := f.app.store.FireQuestionTimers(ctx, 10, func(to store.EmailTo, items []store.QuestionEmailItem) (store.Email, error) {
		for _, it := range items { // earlier questions fold into the same mail
			if to.OwnerID == f.alice.owner.ID && it.ID == q.ID {
				tokens = it.Links
			}
		}
		return store.Email{Subject: "s", Text: "t", HTML: "h"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(tokens) != len(options)+1 {
		t.Fatalf("links %v", tokens)
	}
	return q, tokens
}

// question reads the question as it stands.
func (f *sessionFixture) question(id int64) *store.Question {
	f.app.t.Helper()
	q, err := f.app.store.OwnerQuestion(context.Background(), f.alice.owner.WorkspaceID, id)
	if err != nil {
		f.app.t.Fatal(err)
	}
	return q
}

// browser is a browser that opened an answer link: signed in as c's owner,
// or signed out when c is nil; its CSRF token is the link page's.
func (f *sessionFixture) browser(c *ownerClient) *ownerClient {
	if c != nil {
		return c
	}
	return &ownerClient{client: f.app.client()}
}

func TestAnswerLinkGetNeverAnswersAndPostAnswersOnce(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	q, tokens := f.askWithLinks("k1", "Ship <v2>?", "Yes", "No")
	path := "/answer/" + tokens[0]
	b := f.browser(nil)
	for range 2 {
		res := b.get(path)
		if res.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("Referrer-Policy %q", res.Header.Get("Referrer-Policy"))
		}
		doc := b.doc(res, http.StatusOK)
		if got := doc.Find(`[data-testid="answer-link-question"]`).Text(); got != "Ship <v2>?" {
			t.Errorf("question %q", got)
		}
		if doc.Find(`[data-testid="answer-link-option"]`).Text() != "Yes" || doc.Find(`[data-testid="answer-link-confirm"]`).Length() != 1 {
			t.Errorf("no confirmation of Yes")
		}
		if tok := doc.Find(`form[data-testid="answer-link-form"] input[name="_csrf"]`).AttrOr("value", ""); tok != "" {
			b.csrf = tok
		}
	}
	if q := f.question(q.ID); !q.Open() {
		t.Fatalf("a GET answered: %+v", q)
	}
	// Without the page's CSRF token nothing is answered.
	if res := b.postRaw(path, url.Values{}, false); res.StatusCode != http.StatusForbidden || !f.question(q.ID).Open() {
		t.Fatalf("a POST without CSRF: %d", res.StatusCode)
	}
	doc := b.doc(b.post(path, nil), http.StatusOK)
	if got := doc.Find(`[data-testid="answer-link-answer"]`).Text(); got != "Yes" {
		t.Errorf("done says %q", got)
	}
	got := f.question(q.ID)
	if got.State != store.QuestionAnswered || got.Answer != "Yes" || got.AnsweredByID == nil || *got.AnsweredByID != f.alice.owner.ID {
		t.Fatalf("after the POST: %+v", got)
	}
	// A replay, and the other option's link, are told who answered what.
	for _, c := range []struct {
		method, token, want string
	}{
		{http.MethodPost, tokens[0], "This link was used already. Owner alice@example.com answered this question already: Yes."},
		{http.MethodGet, tokens[0], "This link was used already."},
		{http.MethodPost, tokens[1], "Owner alice@example.com answered this question already: Yes."},
		{http.MethodGet, tokens[2], "Owner alice@example.com answered this question already: Yes."},
	} {
		res := b.get("/answer/" + c.token)
		if c.method == http.MethodPost {
			res = b.post("/answer/"+c.token, nil)
		}
		doc := b.doc(res, http.StatusConflict)
		if got := doc.Find(`[data-testid="answer-link-notice"]`).Text(); !strings.Contains(got, c.want) || doc.Find(`[data-testid="answer-link-form"]`).Length() != 0 {
			t.Errorf("%s %s: %q, want %q and no form", c.method, c.token, got, c.want)
		}
	}
	if got := f.question(q.ID); got.Answer != "Yes" {
		t.Fatalf("the answer changed: %+v", got)
	}
}

func TestAnswerLinkRefusals(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	q, tokens := f.askWithLinks("k1", "Which cache?")

	// Not a link at all, or a forged one.
	b := f.browser(nil)
	for _, bad := range []string{"nope", "1.AAAA", tokens[0] + "x", strings.Replace(tokens[0], ".", "0.", 1)} {
		doc := b.doc(b.get("/answer/"+bad), http.StatusNotFound)
		if !strings.Contains(doc.Find(`[data-testid="answer-link-notice"]`).Text(), "This answer link is not valid") {
			t.Errorf("%q: no notice", bad)
		}
	}

	// Signed in to another workspace: refused, GET and POST.
	bob := f.app.owner("bob@example.com", "Other workspace")
	doc := bob.doc(bob.get("/answer/"+tokens[0]), http.StatusForbidden)
	if !strings.Contains(doc.Find(`[data-testid="answer-link-notice"]`).Text(), "another workspace") || doc.Find(`[data-testid="answer-link-question"]`).Length() != 0 {
		t.Errorf("another workspace's owner sees the question, or no refusal")
	}
	if res := bob.post("/answer/"+tokens[0], url.Values{"answer": {"Bob's"}}); res.StatusCode != http.StatusForbidden || !f.question(q.ID).Open() {
		t.Fatalf("another workspace's owner answered: %d", res.StatusCode)
	}

	// A free-text link: a blank answer is refused with the form again.
	b.csrf = b.doc(b.get("/answer/"+tokens[0]), http.StatusOK).Find(`input[name="_csrf"]`).AttrOr("value", "")
	doc = b.doc(b.post("/answer/"+tokens[0], url.Values{"answer": {"  "}}), http.StatusUnprocessableEntity)
	if doc.Find(`[data-testid="answer-link-error"]`).Text() == "" || doc.Find(`[data-testid="answer-link-text"]`).Length() != 1 || !f.question(q.ID).Open() {
		t.Errorf("a blank answer: no error, or answered")
	}

	// An expired link answers nothing, and says the question is still open.
	f.app.sql().Exec(`UPDATE answer_links SET expires_at = now() - interval '1 second' WHERE question_id = $1`, q.ID)
	for _, res := range []*http.Response{b.get("/answer/" + tokens[0]), b.post("/answer/"+tokens[0], url.Values{"answer": {"Redis"}})} {
		doc := b.doc(res, http.StatusGone)
		if !strings.Contains(doc.Find(`[data-testid="answer-link-notice"]`).Text(), "This link has expired") {
			t.Errorf("%s: no expiry notice", res.Request.Method)
		}
	}
	if !f.question(q.ID).Open() {
		t.Fatal("an expired link answered")
	}
}

// TestAnswerLinkAnswersAsItsOwner: another owner of the workspace signed in
// in the browser does not answer in their own name: the link answers as the
// owner it was mailed to, and the page says so first.
func TestAnswerLinkAnswersAsItsOwner(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	q, tokens := f.askWithLinks("k1", "Which cache?")
	carol := f.app.owner("carol@example.com", "")
	if carol.owner.WorkspaceID != f.alice.owner.WorkspaceID {
		t.Fatal("carol is not in alice's workspace")
	}
	doc := carol.doc(carol.get("/answer/"+tokens[0]), http.StatusOK)
	if got := doc.Find(`[data-testid="answer-link-other-owner"]`).Text(); !strings.Contains(got, "You are signed in as Owner carol@example.com") ||
		!strings.Contains(got, "answers as Owner alice@example.com") {
		t.Errorf("warning %q", got)
	}
	carol.csrf = doc.Find(`input[name="_csrf"]`).AttrOr("value", "")
	doc = carol.doc(carol.post("/answer/"+tokens[0], url.Values{"answer": {"Redis, with a TTL"}}), http.StatusOK)
	if doc.Find(`[data-testid="answer-link-done"]`).Length() != 1 {
		t.Error("no confirmation")
	}
	got := f.question(q.ID)
	if got.Answer != "Redis, with a TTL" || got.AnsweredByID == nil || *got.AnsweredByID != f.alice.owner.ID || got.AnsweredBy != "Owner alice@example.com" {
		t.Fatalf("answered %+v, want as alice", got)
	}
	// The answer is alice's reply to the agent.
	var sender string
	f.app.sql().QueryRow(`SELECT sender_name FROM notes WHERE in_reply_to = $1`, q.ID).Scan(&sender)
	if sender != "Owner alice@example.com" {
		t.Errorf("the answer's note is from %q", sender)
	}
}

// TestAccountEmailSettings: the account page shows what mails the owner
// (questions on by default), saves the form, and says when email is off.
func TestAccountEmailSettings(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("email on ", on), func(t *testing.T) {
			t.Parallel()
			app := newTestApp(t, func(c *Config) { c.Email = on })
			alice := app.owner("alice@example.com", "")
			checked := func() string {
				doc := alice.doc(alice.get("/account"), http.StatusOK)
				if off := doc.Find(`[data-testid="email-off"]`).Length() == 1; off == on {
					t.Errorf("email on %v, the page says off: %v", on, off)
				}
				var s []string
				for _, name := range []string{"questions", "replies", "digest"} {
					if _, ok := doc.Find(`[data-testid="mail-` + name + `"]`).Attr("checked"); ok {
						s = append(s, name)
					}
				}
				return strings.Join(s, ",")
			}
			if got := checked(); got != "questions" {
				t.Fatalf("defaults %q, want questions", got)
			}
			if res := alice.post("/account/mail", url.Values{"replies": {"on"}, "digest": {"on"}}); res.StatusCode != http.StatusSeeOther ||
				res.Header.Get("Location") != "/account?done=mail" {
				t.Fatalf("save: %d %s", res.StatusCode, res.Header.Get("Location"))
			}
			if got := checked(); got != "replies,digest" {
				t.Fatalf("after saving %q, want replies,digest", got)
			}
			m, err := app.store.EmailSettingsOf(context.Background(), alice.owner.ID)
			if err != nil || m != (store.EmailSettings{Replies: true, Digest: true}) {
				t.Fatalf("stored %+v %v", m, err)
			}
			if res := alice.postRaw("/account/mail", url.Values{"questions": {"on"}}, false); res.StatusCode != http.StatusForbidden {
				t.Fatalf("without CSRF: %d", res.StatusCode)
			}
		})
	}
}
