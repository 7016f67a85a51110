package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestQuestionEventsAreSignedAndShaped: a question's notice and reminder
// reach a json endpoint as question.asked and question.reminder (signed,
// with the question, its options, urgency and expiry, and a link to answer
// it) and a Slack-compatible one as text with the options and the link;
// asking it sends nothing until its timer fires.
func TestQuestionEventsAreSignedAndShaped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	_, jsonKey := w.endpoint(rcv.url("/json"), store.WebhookJSON)
	_, slackKey := w.endpoint(rcv.url("/slack"), store.WebhookSlack)
	run(t, testOptions(w.st))

	q, _, err := w.st.AskQuestion(ctx, store.AgentQuestion{WorkspaceID: w.owner.WorkspaceID, ConnectionID: w.connID, SessionType: w.session.Type,
		SessionID: w.session.PublicID, Text: "Ship the redesign <!channel> today?", Options: []string{"Ship", "Wait for @qa"}, Urgency: store.UrgencyBlocking,
		IdempotencyKey: "q-1"})
	if err != nil {
		t.Fatal(err)
	}
	// Asked, not due: the sender has nothing to send.
	if n := len(rcv.requests("/json")) + len(rcv.requests("/slack")); n != 0 {
		t.Fatalf("%d deliveries before the delay", n)
	}
	fire := func(timer string) {
		t.Helper()
		storetest.SQLAt(t, w.dsn).Exec(`UPDATE questions SET due_at = now() WHERE note_id = $1 AND timer = $2`, q.ID, timer)
		if r, err := w.st.FireQuestionTimers(ctx, 10, nil); err != nil || r.Fired != 1 || r.Deliveries != 2 || r.Mails != 0 {
			t.Fatalf("fire %s: %+v %v", timer, r, err)
		}
	}
	fire("notice")
	waitFor(t, 10*time.Second, "the notice at both endpoints", func() bool {
		return len(rcv.requests("/json")) == 1 && len(rcv.requests("/slack")) == 1
	})
	j, s := rcv.requests("/json")[0], rcv.requests("/slack")[0]
	if err := verify(jsonKey, j); err != nil {
		t.Fatalf("json delivery: %v", err)
	}
	if err := verify(slackKey, s); err != nil {
		t.Fatalf("slack delivery: %v", err)
	}
	var ev Event
	if err := json.Unmarshal(j.body, &ev); err != nil {
		t.Fatal(err)
	}
	link := fmt.Sprintf("http://osf.example/sessions/%d?note=%d#note-%d", w.session.ID, q.ID, q.ID)
	if ev.Type != EventQuestionAsked || ev.Question == nil || ev.Question.ID != q.ID || ev.Question.Question != q.Text ||
		strings.Join(ev.Question.Options, "|") != "Ship|Wait for @qa" || ev.Question.Urgency != "blocking" || ev.Question.Status != "open" ||
		!ev.Question.ExpiresAt.Equal(q.ExpiresAt) || ev.Links.Question != link || ev.Note == nil || ev.Note.MessageType != "question" ||
		ev.Session == nil || ev.Session.SessionID != w.session.PublicID {
		t.Fatalf("question.asked event: %s", j.body)
	}
	var slack map[string]string
	if err := json.Unmarshal(s.body, &slack); err != nil {
		t.Fatal(err)
	}
	wantText := "*Blocking question: the agent waits for your decision*\n" +
		"Ada Agent (outside assistant) asks in Checkout redesign · Storefront:\n" +
		"Ship the redesign &lt;!channel&gt; today?\n" +
		"Options:\n1. Ship\n2. Wait for @\u200bqa\n" +
		"Expires with no decision at " + q.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC") + ".\n" +
		"Answer it: " + link
	if slack["text"] != wantText {
		t.Fatalf("slack text\n got %q\nwant %q", slack["text"], wantText)
	}

	fire("reminder")
	waitFor(t, 10*time.Second, "the reminder at both endpoints", func() bool {
		return len(rcv.requests("/json")) == 2 && len(rcv.requests("/slack")) == 2
	})
	if err := json.Unmarshal(rcv.requests("/json")[1].body, &ev); err != nil || ev.Type != EventQuestionReminder {
		t.Fatalf("reminder event %s: %v", rcv.requests("/json")[1].body, err)
	}
	if err := json.Unmarshal(rcv.requests("/slack")[1].body, &slack); err != nil || !strings.HasPrefix(slack["text"], "*Reminder: a question is still waiting") {
		t.Fatalf("reminder text %q", slack["text"])
	}
}
