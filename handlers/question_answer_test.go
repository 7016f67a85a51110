package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// ask posts the agent's question to the fixture's session, as ask_owner
// does.
func (f *sessionFixture) ask(key, text string, options ...string) *store.Question {
	f.app.t.Helper()
	q, _, err := f.app.store.AskQuestion(context.Background(), store.AgentQuestion{WorkspaceID: f.ag.workspaceID, ConnectionID: f.ag.connID,
		SessionType: f.session.Type, SessionID: f.session.PublicID, Text: text, Options: options, Urgency: store.UrgencyBlocking, IdempotencyKey: key})
	if err != nil {
		f.app.t.Fatal(err)
	}
	f.app.store.FlushNotifications()
	return q
}

func (f *sessionFixture) answerURL(q *store.Question) string {
	return fmt.Sprintf("%s/questions/%d/answer", f.url, q.ID)
}

// TestQuestionOnTheSessionPageAndInTheInbox: an open question shows its
// options and a free-text box on its session page and at the top of the
// inbox; an option answers it, as a reply to the agent in answer to the
// question; the box then says who answered what, and the inbox no longer
// lists it as waiting.
func TestQuestionOnTheSessionPageAndInTheInbox(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	q := f.ask("q-1", "Ship v2 or keep v1 "+xss+"?", "Ship v2", "Keep v1 "+xss)

	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	html, _ := doc.Html()
	noRawXSS(t, html)
	box := doc.Find(fmt.Sprintf(`#note-%d [data-testid="question-box"]`, q.ID))
	if box.AttrOr("data-state", "") != "open" || box.Find(`[data-testid="question-urgency"]`).Text() != "blocking" {
		t.Fatalf("the session page shows no open, blocking question box for note %d", q.ID)
	}
	var opts []string
	box.Find(`[data-testid="question-option"]`).Each(func(_ int, b *goquery.Selection) { opts = append(opts, b.Text()) })
	if len(opts) != 2 || opts[0] != "Ship v2" || opts[1] != "Keep v1 "+xss {
		t.Errorf("options %q", opts)
	}
	if box.Find(`[data-testid="question-answer-text"]`).Length() != 1 {
		t.Error("no free-text answer box")
	}
	if got := box.Find(`form[data-testid="question-options"]`).AttrOr("hx-post", ""); got != f.answerURL(q) {
		t.Errorf("the options post to %q", got)
	}

	inbox := f.alice.doc(f.alice.get("/inbox"), http.StatusOK)
	if n := inbox.Find(`[data-testid="inbox-questions-count"]`).Text(); n != "1" {
		t.Errorf("the inbox counts %q questions waiting", n)
	}
	if inbox.Find(`[data-testid="inbox-question"] [data-testid="question-box"][data-state="open"]`).Length() != 1 {
		t.Error("the inbox shows no open question box")
	}
	if got := inbox.Find(`[data-testid="inbox-question"] form[data-testid="question-free"]`).AttrOr("action", ""); got != f.answerURL(q)+"?back=inbox" {
		t.Errorf("the inbox's form posts to %q", got)
	}

	// The questions view lists it with its answer box, and no section above.
	view := f.alice.doc(f.alice.get("/inbox?show=questions"), http.StatusOK)
	if view.Find(fmt.Sprintf(`#inbox-%d [data-testid="question-box"][data-state="open"]`, q.ID)).Length() != 1 || view.Find(`[data-testid="inbox-questions"]`).Length() != 0 {
		t.Error("the questions view does not list the question with its answer box alone")
	}

	// Answered from the inbox by a form without script: back to the inbox.
	res := f.alice.post(f.answerURL(q)+"?back=inbox", url.Values{"option": {"1"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/inbox" {
		t.Fatalf("answer: status %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	got, err := f.app.store.OwnerQuestion(context.Background(), f.alice.owner.WorkspaceID, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.QuestionAnswered || got.Answer != "Keep v1 "+xss || got.AnsweredBy != f.alice.owner.DisplayName || got.ClosedBy == nil {
		t.Fatalf("the question is %+v", got)
	}
	notes, err := f.app.store.ListSessionMail(context.Background(), f.alice.owner.WorkspaceID, f.session.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	reply := notes[0]
	if reply.ID != *got.ClosedBy || reply.MessageType != store.MessageReply || reply.InReplyTo == nil || *reply.InReplyTo != q.ID ||
		reply.RecipientSlug == nil || *reply.RecipientSlug != f.ag.slug || reply.Body != "Keep v1 "+xss {
		t.Errorf("the answer's note is %+v", reply)
	}

	doc = f.alice.doc(f.alice.get(f.url), http.StatusOK)
	box = doc.Find(fmt.Sprintf(`#note-%d [data-testid="question-box"]`, q.ID))
	if box.AttrOr("data-state", "") != "answered" || box.Find(`[data-testid="question-answered-by"]`).Text() != f.alice.owner.DisplayName ||
		box.Find(`[data-testid="question-answer"]`).Text() != "Keep v1 "+xss || box.Find("form").Length() != 0 {
		t.Error("the answered question's box does not say who answered what, or still offers answers")
	}
	inbox = f.alice.doc(f.alice.get("/inbox"), http.StatusOK)
	if inbox.Find(`[data-testid="inbox-questions"]`).AttrOr("hidden", "none") == "none" || inbox.Find(`[data-testid="inbox-question"]`).Length() != 0 {
		t.Error("the inbox still lists the answered question as waiting")
	}
	if s := inbox.Find(fmt.Sprintf(`#inbox-%d [data-testid="question-state"]`, q.ID)).AttrOr("data-state", ""); s != "answered" {
		t.Errorf("the inbox's row of the question says %q", s)
	}
	if n := f.alice.doc(f.alice.get("/inbox?show=questions"), http.StatusOK).Find(`[data-testid="inbox-note"]`).Length(); n != 0 {
		t.Errorf("the questions view lists %d rows after the answer", n)
	}
	// The questions section alone, as the page fetches it.
	part := f.alice.doc(f.alice.htmx("/inbox/questions"), http.StatusOK)
	if part.Find(`[data-testid="inbox-questions"]`).Length() != 1 || part.Find("nav.topnav").Length() != 0 {
		t.Error("/inbox/questions is not the section alone")
	}
}

// TestALaterAnswerIsToldWhoAnswered: once answered, another answer — by
// the same owner or another, an option or free text — is refused (409) with
// who answered what, and the box as it stands; nothing else is written.
func TestALaterAnswerIsToldWhoAnswered(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	carol := f.app.owner("carol@example.com", "")
	q := f.ask("q-1", "Which port?")

	doc := f.alice.doc(f.alice.postHTMX(f.answerURL(q), url.Values{"answer": {"  8080  "}}), http.StatusOK)
	if doc.Find(`[data-testid="question-box"]`).AttrOr("data-state", "") != "answered" || doc.Find(`[data-testid="question-answer"]`).Text() != "8080" {
		t.Fatal("the htmx answer does not return the answered box")
	}
	carol.refreshCSRF(f.url)
	doc = carol.doc(carol.postHTMX(f.answerURL(q), url.Values{"answer": {"9090"}}), http.StatusConflict)
	if n := doc.Find(`[data-testid="question-notice"]`).Text(); !strings.Contains(n, f.alice.owner.DisplayName) || !strings.Contains(n, "8080") {
		t.Errorf("the later answer is told %q", n)
	}
	// Without script: a page of its own saying the same.
	doc = carol.doc(carol.post(f.answerURL(q), url.Values{"answer": {"9090"}}), http.StatusConflict)
	if !strings.Contains(doc.Find(`[data-testid="question-notice"]`).Text(), "8080") || doc.Find("nav.topnav").Length() == 0 {
		t.Error("the refusal without script is not a page saying who answered")
	}
	if href := doc.Find(`[data-testid="question-back"]`).AttrOr("href", ""); href != views.NoteURL(f.session.ID, q.ID) {
		t.Errorf("the refusal without script links back to %q, want the note", href)
	}
	doc = carol.doc(carol.post(f.answerURL(q)+"?back=inbox", url.Values{"answer": {"9090"}}), http.StatusConflict)
	if href := doc.Find(`[data-testid="question-back"]`).AttrOr("href", ""); href != "/inbox" {
		t.Errorf("the refusal without script from the inbox links back to %q, want /inbox", href)
	}
	var replies int
	f.app.sql().QueryRow(`SELECT count(*) FROM notes WHERE in_reply_to = $1`, q.ID).Scan(&replies)
	if replies != 1 {
		t.Errorf("%d answers written, want 1", replies)
	}
}

// TestAnsweringIsRefused: a question of another workspace (404), another
// session's question through this one's URL (404), an option it does not
// offer or an empty answer (422, the box with the message), and no CSRF
// token (403) are all refused, and the question stays open.
func TestAnsweringIsRefused(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	bob := f.app.owner("bob@example.com", "Bob's")
	other := f.alice.session(f.p, "Other")
	q := f.ask("q-1", "Which?", "a", "b")

	bob.doc(bob.postHTMX(f.answerURL(q), url.Values{"option": {"0"}}), http.StatusNotFound)
	f.alice.doc(f.alice.postHTMX(fmt.Sprintf("/sessions/%d/questions/%d/answer", other.ID, q.ID), url.Values{"option": {"0"}}), http.StatusNotFound)
	doc := f.alice.doc(f.alice.postHTMX(f.answerURL(q), url.Values{"option": {"2"}}), http.StatusUnprocessableEntity)
	if doc.Find(`[data-testid="question-notice"]`).Text() == "" || doc.Find(`[data-testid="question-box"]`).AttrOr("data-state", "") != "open" {
		t.Error("an option the question does not offer is not refused in the box")
	}
	f.alice.doc(f.alice.postHTMX(f.answerURL(q), url.Values{"answer": {"  "}}), http.StatusUnprocessableEntity)
	if res := f.alice.postRaw(f.answerURL(q), url.Values{"option": {"0"}}, true); res.StatusCode != http.StatusForbidden {
		t.Errorf("without a CSRF token: status %d", res.StatusCode)
	}
	got, err := f.app.store.OwnerQuestion(context.Background(), f.alice.owner.WorkspaceID, q.ID)
	if err != nil || got.State != store.QuestionOpen {
		t.Fatalf("the question is %+v (%v)", got, err)
	}
}

// TestTwoOwnersAnsweringAtOnce: of two owners answering the same question
// at the same moment, exactly one wins; the other is told who answered.
func TestTwoOwnersAnsweringAtOnce(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	carol := f.app.owner("carol@example.com", "")
	carol.refreshCSRF(f.url)
	for round := range 5 {
		q := f.ask(fmt.Sprintf("q-%d", round), "Which?", "a", "b")
		var wg sync.WaitGroup
		codes := make([]int, 2)
		start := make(chan struct{})
		for i, c := range []*ownerClient{f.alice, carol} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				req, _ := http.NewRequest(http.MethodPost, f.app.srv.URL+f.answerURL(q), strings.NewReader(url.Values{"option": {fmt.Sprint(i)}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("HX-Request", "true")
				req.Header.Set("X-CSRF-Token", c.csrf)
				res, err := c.http.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				codes[i] = res.StatusCode
			}()
		}
		close(start)
		wg.Wait()
		if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
			t.Fatalf("round %d: statuses %v, want one 200 and one 409", round, codes)
		}
		var replies int
		f.app.sql().QueryRow(`SELECT count(*) FROM notes WHERE in_reply_to = $1`, q.ID).Scan(&replies)
		if replies != 1 {
			t.Fatalf("round %d: %d answers written", round, replies)
		}
	}
}

// TestAnAnswerReachesOpenPagesLive: the answer's note arrives on the
// session stream with the question's box as it now stands, out of band, so
// another owner's open page stops offering the options at once.
func TestAnAnswerReachesOpenPagesLive(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	carol := f.app.owner("carol@example.com", "")
	q := f.ask("q-1", "Which?", "a", "b")
	st := carol.openEvents(f.url + "/stream")
	f.app.waitStreams(f.session.ID, 1)

	f.alice.doc(f.alice.postHTMX(f.answerURL(q), url.Values{"option": {"1"}}), http.StatusOK)
	m := st.next("note", 5*time.Second)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(m.data))
	if err != nil {
		t.Fatal(err)
	}
	oob := doc.Find(fmt.Sprintf(`#question-%d[hx-swap-oob="outerHTML"]`, q.ID))
	if oob.AttrOr("data-state", "") != "answered" || oob.Find(`[data-testid="question-answer"]`).Text() != "b" {
		t.Errorf("the live row does not carry the answered box out of band:\n%s", m.data)
	}
}

// TestProjectQuestionSettings: the project page shows the question delays
// (2 and 15 minutes, 24 hours by default) and saves new ones; a value out
// of bounds or not a number is refused with its field named, the others
// kept as sent, and nothing saved.
func TestProjectQuestionSettings(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	page := fmt.Sprintf("/projects/%d", f.p.ID)
	doc := f.alice.doc(f.alice.get(page), http.StatusOK)
	for field, want := range map[string]string{"blocking_minutes": "2", "normal_minutes": "15", "expiry_hours": "24"} {
		if got := doc.Find(`[data-testid="q-`+field+`"]`).AttrOr("value", ""); got != want {
			t.Errorf("%s shows %q, want %q", field, got, want)
		}
	}
	res := f.alice.post(page+"/questions", url.Values{"blocking_minutes": {"1"}, "normal_minutes": {"5"}, "expiry_hours": {"48"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: status %d", res.StatusCode)
	}
	want := store.QuestionSettings{BlockingMinutes: 1, NormalMinutes: 5, ExpiryHours: 48}
	if got, err := f.app.store.ProjectQuestionSettings(context.Background(), f.alice.owner.WorkspaceID, f.p.ID); err != nil || got != want {
		t.Fatalf("saved %+v (%v)", got, err)
	}
	doc = f.alice.doc(f.alice.post(page+"/questions", url.Values{"blocking_minutes": {"61"}, "normal_minutes": {"ten"}, "expiry_hours": {"0"}}), http.StatusUnprocessableEntity)
	for field, msg := range map[string]string{"blocking_minutes": "use 0 to 60 minutes", "normal_minutes": "enter a whole number"} {
		if got := doc.Find(`[data-testid="error-` + field + `"]`).Text(); got != msg {
			t.Errorf("%s: error %q, want %q", field, got, msg)
		}
	}
	if got := doc.Find(`[data-testid="q-blocking_minutes"]`).AttrOr("value", ""); got != "61" {
		t.Errorf("the refused form shows %q, not what was sent", got)
	}
	doc = f.alice.doc(f.alice.post(page+"/questions", url.Values{"blocking_minutes": {"3"}, "normal_minutes": {"3"}, "expiry_hours": {"0"}}), http.StatusUnprocessableEntity)
	if got := doc.Find(`[data-testid="error-expiry_hours"]`).Text(); got != "use 1 to 168 hours" {
		t.Errorf("expiry_hours: error %q", got)
	}
	if got, _ := f.app.store.ProjectQuestionSettings(context.Background(), f.alice.owner.WorkspaceID, f.p.ID); got != want {
		t.Errorf("a refused form changed the settings to %+v", got)
	}
}
