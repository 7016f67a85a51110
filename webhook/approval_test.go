package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// TestApprovalEventsAreSignedAndShaped: an approval nobody decided within
// its project's delay reaches a json endpoint as approval.requested (signed,
// with the tool, the summary, the agent and a link to decide) and a
// Slack-compatible one as text with the link, the agent's summary made
// inert; one decided before its notice sends nothing.
func TestApprovalEventsAreSignedAndShaped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	_, jsonKey := w.endpoint(rcv.url("/json"), store.WebhookJSON)
	_, slackKey := w.endpoint(rcv.url("/slack"), store.WebhookSlack)
	run(t, testOptions(w.st))
	if _, _, err := w.st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: w.owner.WorkspaceID, ConnectionID: w.connID, SessionType: w.session.Type,
		SessionID: w.session.PublicID, Subject: "On it", Body: "Working.", IdempotencyKey: "n-1"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the note at both endpoints", func() bool {
		return len(rcv.requests("/json")) == 1 && len(rcv.requests("/slack")) == 1
	})
	ask := func(summary string) *store.Approval {
		t.Helper()
		a, err := w.st.RequestApproval(ctx, store.ApprovalRequest{WorkspaceID: w.owner.WorkspaceID, ConnectionID: w.connID, Tool: "Bash",
			Summary: summary, Repo: "acme/shop", Branch: "fix/orders-total"})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	decided := ask("ls")
	if _, err := w.st.DecideApproval(ctx, store.Decision{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, ApprovalID: decided.ID, Allow: true}); err != nil {
		t.Fatal(err)
	}
	a := ask("npm publish <!channel> @here")
	if n := len(rcv.requests("/json")) + len(rcv.requests("/slack")); n != 2 {
		t.Fatalf("%d deliveries before the timer", n)
	}
	if r, err := w.st.FireApprovalTimers(ctx, 10, nil); err != nil || r.Fired != 1 || r.Deliveries != 2 {
		t.Fatalf("fire: %+v %v", r, err)
	}
	waitFor(t, 10*time.Second, "the notice at both endpoints", func() bool {
		return len(rcv.requests("/json")) == 2 && len(rcv.requests("/slack")) == 2
	})
	j, s := rcv.requests("/json")[1], rcv.requests("/slack")[1]
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
	link := fmt.Sprintf("http://osf.example/sessions/%d", w.session.ID)
	if ev.Type != EventApprovalRequested || ev.Approval == nil || ev.Approval.ID != a.ID || ev.Approval.Tool != "Bash" ||
		ev.Approval.Summary != a.Summary || ev.Approval.Agent != "@ada" || ev.Approval.Status != "pending" || ev.Links.Approval != link ||
		ev.Session == nil || ev.Session.ID != w.session.ID || ev.Session.SessionID != w.session.PublicID || ev.Note != nil {
		t.Fatalf("approval.requested event: %s", j.body)
	}
	var slack map[string]string
	if err := json.Unmarshal(s.body, &slack); err != nil {
		t.Fatal(err)
	}
	wantText := "*Approval waiting: an agent asks before a tool runs*\n" +
		"@\u200bada (outside assistant) asks to use Bash in acme/shop fix/orders-total · Storefront\n" +
		"`npm publish &lt;!channel&gt; @\u200bhere`\n" +
		"Without a decision by " + a.ExpiresAt.UTC().Format("15:04:05 UTC") + " the agent gets none (never an allow).\n" +
		"Allow or deny it: " + link
	if slack["text"] != wantText {
		t.Fatalf("slack text\n got %q\nwant %q", slack["text"], wantText)
	}
}
