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

func (f *mailFixture) requestApproval(t *testing.T, command string) *store.Approval {
	t.Helper()
	a, err := f.st.RequestApproval(context.Background(), store.ApprovalRequest{WorkspaceID: f.owner.WorkspaceID, ConnectionID: f.connID,
		Tool: "Bash", Summary: command, Repo: "acme/shop", Branch: "fix/orders-total", ClientSession: "cc-1"})
	if err != nil {
		t.Fatalf("request approval: %v", err)
	}
	return a
}

func TestApprovalGoesToTheSessionTheAgentLastWorkedIn(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID

	// No note yet: no session, the inbox only.
	a := f.requestApproval(t, "npm publish\nrm -rf /")
	if a.SessionID != nil || a.State != store.ApprovalPending || a.Summary != "npm publish rm -rf /" {
		t.Fatalf("before any note: %+v", a)
	}
	if got := a.Headline(); got != "@ada asks to run `npm publish rm -rf /` in acme/shop fix/orders-total" {
		t.Errorf("headline %q", got)
	}
	f.agentNote(t, "Working on totals")
	b := f.requestApproval(t, "npm publish")
	if b.SessionID == nil || *b.SessionID != f.sess.ID || b.ProjectID == nil {
		t.Fatalf("after a note: %+v, want session %d", b, f.sess.ID)
	}
	if d := b.ExpiresAt.Sub(b.CreatedAt).Seconds(); d < 119 || d > 121 {
		t.Errorf("wait %v s, want the default 120", d)
	}
	pending, err := f.st.PendingApprovals(ctx, ws, 0, 10)
	if err != nil || len(pending) != 2 || pending[0].ID != b.ID {
		t.Fatalf("pending: %v %+v", err, pending)
	}
	inSession, err := f.st.SessionApprovals(ctx, ws, f.sess.ID, 10)
	if err != nil || len(inSession) != 1 || inSession[0].ID != b.ID {
		t.Fatalf("session's: %v %+v", err, inSession)
	}
	events, _, err := f.st.PollEvents(ctx, ws, f.connID, f.sess.Type, f.sess.PublicID, 0, 100)
	if err != nil || events[len(events)-1].Kind != "approval_requested" {
		t.Fatalf("events: %v %+v", err, events)
	}

	for name, r := range map[string]store.ApprovalRequest{
		"no tool":      {Summary: "x"},
		"long summary": {Tool: "Bash", Summary: strings.Repeat("x", store.MaxApprovalSummary+1)},
		"long tool":    {Tool: strings.Repeat("t", store.MaxApprovalTool+1)},
	} {
		r.WorkspaceID, r.ConnectionID = ws, f.connID
		var fe *store.FieldError
		if _, err := f.st.RequestApproval(ctx, r); !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a field error", name, err)
		}
	}

	// Approvals off for the project: none is made.
	if err := f.st.SetProjectApprovalSettings(ctx, ws, *b.ProjectID, store.ApprovalSettings{Enabled: false, WaitSeconds: 30}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.RequestApproval(ctx, store.ApprovalRequest{WorkspaceID: ws, ConnectionID: f.connID, Tool: "Bash"}); !errors.Is(err, store.ErrApprovalsOff) {
		t.Errorf("approvals off: %v", err)
	}
	for _, bad := range []store.ApprovalSettings{{WaitSeconds: 9}, {WaitSeconds: 601}, {WaitSeconds: 60, DelayMinutes: 61}} {
		if err := f.st.SetProjectApprovalSettings(ctx, ws, *b.ProjectID, bad); err == nil {
			t.Errorf("settings %+v accepted", bad)
		}
	}
}

func TestApprovalFirstDecisionWins(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	otto := storetest.SQL(t, f.st).InsertOwner(ws, "Otto")
	f.agentNote(t, "Working")

	for round := range 5 {
		a := f.requestApproval(t, "npm publish")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, owner := range []int64{f.owner.ID, otto} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = f.st.DecideApproval(ctx, store.Decision{WorkspaceID: ws, OwnerID: owner, ApprovalID: a.ID, Allow: i == 0,
					Reason: "not on a Friday", From: "192.0.2.7"})
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			var closed *store.ErrApprovalClosed
			switch {
			case err == nil:
				won++
			case errors.As(err, &closed):
				if name := closed.Approval.DecidedBy; name == "" || !strings.Contains(err.Error(), name+" ") {
					t.Errorf("the later decision's refusal names nobody: %v", err)
				}
			default:
				t.Fatalf("decide: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d decisions won, want 1 (%v)", round, won, errs)
		}
		got, err := f.st.AgentApproval(ctx, ws, f.connID, a.ID)
		if err != nil || got.Pending() || got.DecidedFrom != "192.0.2.7" || got.DecidedAt == nil || got.DecidedByID == nil {
			t.Fatalf("decided: %v %+v", err, got)
		}
		if got.State == store.ApprovalAllowed && got.Reason != "" || got.State == store.ApprovalDenied && got.Reason != "not on a Friday" {
			t.Errorf("reason kept: %+v", got)
		}
		// Ending it afterwards keeps the decision.
		if after, err := f.st.EndApproval(ctx, ws, f.connID, a.ID, store.ApprovalTerminal); err != nil || after.State != got.State {
			t.Errorf("end after a decision: %v %+v", err, after)
		}
	}

	// Answered at the terminal: a later click is refused so.
	a := f.requestApproval(t, "git push")
	if _, err := f.st.EndApproval(ctx, ws, f.connID, a.ID, store.ApprovalExpired); err != nil {
		t.Fatal(err) // not past its wait: stays pending
	}
	if got, _ := f.st.AgentApproval(ctx, ws, f.connID, a.ID); !got.Pending() {
		t.Fatalf("expired before its wait: %+v", got)
	}
	if got, err := f.st.EndApproval(ctx, ws, f.connID, a.ID, store.ApprovalTerminal); err != nil || got.State != store.ApprovalTerminal {
		t.Fatalf("terminal: %v %+v", err, got)
	}
	var closed *store.ErrApprovalClosed
	if _, err := f.st.DecideApproval(ctx, store.Decision{WorkspaceID: ws, OwnerID: otto, ApprovalID: a.ID, Allow: true}); !errors.As(err, &closed) ||
		!strings.Contains(err.Error(), "terminal") {
		t.Errorf("decision after the terminal: %v", err)
	}
	// Another workspace's owner finds nothing.
	other, err := f.st.CreateOwner(ctx, store.NewOwner{Email: "x@example.com", DisplayName: "X", Password: "long enough password", WorkspaceName: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	b := f.requestApproval(t, "ls")
	if _, err := f.st.DecideApproval(ctx, store.Decision{WorkspaceID: other.WorkspaceID, OwnerID: other.ID, ApprovalID: b.ID, Allow: true}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another workspace's owner: %v", err)
	}
	if _, err := f.st.DecideApproval(ctx, store.Decision{WorkspaceID: ws, OwnerID: other.ID, ApprovalID: b.ID, Allow: true}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an owner of another workspace naming this one: %v", err)
	}
	events, _, err := f.st.PollEvents(ctx, ws, f.connID, f.sess.Type, f.sess.PublicID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	decided := 0
	for _, e := range events {
		if e.Kind == "approval_decided" {
			decided++
		}
	}
	if decided != 6 {
		t.Errorf("%d approval_decided events, want 6", decided)
	}
}
