package push_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/push"
	"github.com/osfoundry/osfoundry/push/pushtest"
	"github.com/osfoundry/osfoundry/store"
)

// waitApprovalState waits until every push of the approval is in state.
func (w *world) waitApprovalState(t *testing.T, approvalID int64, state string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left int
		w.sql.QueryRow(`SELECT count(*) FROM push_outbox WHERE approval_id = $1 AND state <> $2`, approvalID, state).Scan(&left)
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pushes of approval %d not all %s", approvalID, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An approval is pushed at once to each device of each owner who may
// decide (admins and members), never to a viewer's, a removed owner's or
// one who turned questions and approvals off: what the agent asks, one
// line of its summary, the approval's tag and URL, Allow and Deny posted
// where the page decides. A decision replaces it, silently, with the same
// tag; an approval decided before its push went out is not pushed.
func TestApprovalIsPushedToThoseWhoDecide(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	person := func(email, name string, role store.Role) *store.Owner {
		o, err := w.st.CreateOwner(ctx, store.NewOwner{Email: email, DisplayName: name, Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		w.sql.Exec(`UPDATE owners SET role = $2 WHERE id = $1`, o.ID, role)
		return o
	}
	member := person("mia@example.com", "Mia Member", store.RoleMember)
	viewer := person("vic@example.com", "Vic Viewer", store.RoleViewer)
	removed := person("rex@example.com", "Rex Removed", store.RoleMember)
	quiet := person("quinn@example.com", "Quinn Quiet", store.RoleMember)
	phone, _ := w.subscribe(t, w.owner.ID)
	laptop, _ := w.subscribe(t, w.owner.ID)
	miaPhone, _ := w.subscribe(t, member.ID)
	vicPhone, _ := w.subscribe(t, viewer.ID)
	rexPhone, _ := w.subscribe(t, removed.ID)
	quinnPhone, _ := w.subscribe(t, quiet.ID)
	w.sql.Exec(`UPDATE owners SET removed_at = now() WHERE id = $1`, removed.ID)
	if err := w.st.SetPushSettings(ctx, w.owner.WorkspaceID, quiet.ID, store.PushSettings{Replies: true}); err != nil {
		t.Fatal(err)
	}

	a, err := w.st.RequestApproval(ctx, store.ApprovalRequest{WorkspaceID: w.owner.WorkspaceID, ConnectionID: w.connID, Tool: "Bash",
		Summary: "npm publish --tag next && echo " + strings.Repeat("a", 150), Repo: "acme/shop", Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	tag := "approval-" + itoa(a.ID)
	devices := []*pushtest.Device{phone, laptop, miaPhone}
	for _, d := range devices {
		m := w.svc.WaitMessages(t, d, 1, 20*time.Second)[0]
		p := m.Payload
		// Clipped: the title to MaxTitle, the summary's line to MaxLine.
		if !strings.HasPrefix(p.Title, "@ask-bot asks to run `npm publish --tag next && echo aaa") || len([]rune(p.Title)) != push.MaxTitle ||
			!strings.HasSuffix(p.Title, "…") {
			t.Errorf("title %q (%d)", p.Title, len([]rune(p.Title)))
		}
		if !strings.HasPrefix(p.Body, "npm publish --tag next && echo aaa") || len([]rune(p.Body)) != push.MaxLine || !strings.HasSuffix(p.Body, "…") {
			t.Errorf("body %q (%d)", p.Body, len([]rune(p.Body)))
		}
		if p.Tag != tag || m.Topic != tag || m.Urgency != "high" || p.URL != "/inbox#"+tag || p.Silent {
			t.Errorf("tag %q topic %q urgency %q url %q silent %v", p.Tag, m.Topic, m.Urgency, p.URL, p.Silent)
		}
		if len(p.Actions) != 2 || p.Actions[0] != (push.Action{Action: "allow", Title: "Allow"}) || p.Actions[1] != (push.Action{Action: "deny", Title: "Deny"}) ||
			p.AnswerURL != "/approvals/"+itoa(a.ID)+"/decide" || p.AnswerField != "verdict" {
			t.Errorf("actions %+v at %q as %q", p.Actions, p.AnswerURL, p.AnswerField)
		}
	}
	w.waitApprovalState(t, a.ID, store.PushSent)
	var queued int
	w.sql.QueryRow(`SELECT count(*) FROM push_outbox WHERE approval_id = $1`, a.ID).Scan(&queued)
	if queued != len(devices) {
		t.Errorf("%d pushes queued, want %d", queued, len(devices))
	}

	if _, err := w.st.DecideApproval(ctx, store.Decision{WorkspaceID: w.owner.WorkspaceID, OwnerID: member.ID, ApprovalID: a.ID, From: "192.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	for _, d := range devices {
		got := w.svc.WaitMessages(t, d, 2, 20*time.Second)
		u := got[1].Payload
		if u.Tag != tag || got[1].Topic != tag || u.Title != "Mia Member denied @ask-bot the use of Bash" || u.Body != got[0].Payload.Body ||
			len(u.Actions) != 0 || u.AnswerURL != "" || !u.Silent {
			t.Errorf("update %+v (topic %q)", u, got[1].Topic)
		}
	}
	w.waitApprovalState(t, a.ID, store.PushSent)
	for _, d := range []*pushtest.Device{vicPhone, rexPhone, quinnPhone} {
		if n := len(w.svc.Messages(d)); n != 0 {
			t.Errorf("a device of an owner who does not decide got %d pushes", n)
		}
	}
	for _, d := range devices {
		if n := len(w.svc.Messages(d)); n != 2 {
			t.Errorf("a device got %d pushes, want 2", n)
		}
	}
}

// At claim time an approval no longer pending is skipped: it is not pushed,
// and nothing replaces what was never shown.
func TestDecidedApprovalIsNotPushed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	d, _ := w.subscribe(t, w.owner.ID)
	// Held back, as if the sender were busy, until the decision.
	w.sql.Exec(`CREATE FUNCTION hold_push() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN NEW.next_attempt_at := now() + interval '1 hour'; RETURN NEW; END $$`)
	w.sql.Exec(`CREATE TRIGGER hold_push BEFORE INSERT ON push_outbox FOR EACH ROW EXECUTE FUNCTION hold_push()`)
	a, err := w.st.RequestApproval(ctx, store.ApprovalRequest{WorkspaceID: w.owner.WorkspaceID, ConnectionID: w.connID, Tool: "Bash", Summary: "make deploy"})
	if err != nil {
		t.Fatal(err)
	}
	w.sql.Exec(`DROP TRIGGER hold_push ON push_outbox`)
	if _, err := w.st.DecideApproval(ctx, store.Decision{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, ApprovalID: a.ID, Allow: true, From: "192.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	w.sql.Exec(`UPDATE push_outbox SET next_attempt_at = now() WHERE approval_id = $1`, a.ID)
	w.waitApprovalState(t, a.ID, store.PushSkipped)
	var n int
	w.sql.QueryRow(`SELECT count(*) FROM push_outbox WHERE approval_id = $1`, a.ID).Scan(&n)
	if n != 1 || len(w.svc.Messages(d)) != 0 {
		t.Errorf("%d pushes queued, %d sent, want 1 skipped", n, len(w.svc.Messages(d)))
	}
}
