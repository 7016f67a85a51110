package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

const teamPassword = "long enough password"

// team is a workspace with an admin, a member and a viewer, a project, a
// session and an agent's question in it.
type team struct {
	st                    *store.Store
	db                    *storetest.Fixtures
	admin, member, viewer *store.Owner
	project               *store.Project
	session               *store.Session
	conn                  *store.Connection
}

func newTeam(t *testing.T) *team {
	t.Helper()
	ctx := context.Background()
	tm := &team{st: storetest.New(t)}
	tm.db = storetest.SQL(t, tm.st)
	mk := func(email string, role store.Role) *store.Owner {
		o, err := tm.st.CreateOwner(ctx, store.NewOwner{Email: email, DisplayName: strings.Split(email, "@")[0], Password: teamPassword, Role: role})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	tm.admin, tm.member, tm.viewer = mk("ada@example.com", ""), mk("max@example.com", store.RoleMember), mk("vi@example.com", store.RoleViewer)
	var err error
	if tm.project, err = tm.st.CreateProject(ctx, tm.admin.WorkspaceID, "Site"); err != nil {
		t.Fatal(err)
	}
	if tm.session, err = tm.st.CreateSession(ctx, store.NewSession{WorkspaceID: tm.admin.WorkspaceID, ProjectID: tm.project.ID, Type: "team_session", Title: "Launch"}); err != nil {
		t.Fatal(err)
	}
	if tm.conn, err = tm.st.CreateConnection(ctx, store.NewConnection{WorkspaceID: tm.admin.WorkspaceID, OwnerID: tm.admin.ID, ClientName: "Agent",
		Scopes: []string{store.ScopeRead, store.ScopeWrite}, ProjectIDs: []int64{tm.project.ID}}); err != nil {
		t.Fatal(err)
	}
	return tm
}

func as(o *store.Owner) store.Actor {
	return store.Actor{OwnerID: o.ID, WorkspaceID: o.WorkspaceID, RemoteAddr: "192.0.2.9", UserAgent: "TestBrowser/1.0"}
}

func (tm *team) auditCount(t *testing.T, kind store.AuditKind) int {
	t.Helper()
	var n int
	tm.db.QueryRow(`SELECT count(*) FROM audit_log WHERE kind = $1`, string(kind)).Scan(&n)
	return n
}

func TestFirstOwnerIsAdminAndTheLastAdminStays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tm := newTeam(t)
	if tm.admin.Role != store.RoleAdmin {
		t.Fatalf("first owner's role = %q, want admin", tm.admin.Role)
	}
	if err := tm.st.SetRole(ctx, as(tm.admin), tm.admin.ID, store.RoleMember); !errors.Is(err, store.ErrLastAdmin) {
		t.Fatalf("demoting the last admin: %v, want ErrLastAdmin", err)
	}
	if err := tm.st.RemovePerson(ctx, as(tm.admin), tm.admin.ID); !errors.Is(err, store.ErrLastAdmin) {
		t.Fatalf("the last admin leaving: %v, want ErrLastAdmin", err)
	}
	if n := tm.auditCount(t, store.AuditRoleChanged) + tm.auditCount(t, store.AuditPersonRemoved); n != 0 {
		t.Fatalf("%d audit rows of refused changes", n)
	}
	// With a second admin, the first may step down; then the second is
	// the last one.
	if err := tm.st.SetRole(ctx, as(tm.admin), tm.member.ID, store.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if err := tm.st.SetRole(ctx, as(tm.admin), tm.admin.ID, store.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if err := tm.st.SetRole(ctx, as(tm.member), tm.member.ID, store.RoleMember); !errors.Is(err, store.ErrLastAdmin) {
		t.Fatalf("demoting the new last admin: %v", err)
	}
	// The former admin is a viewer now, refused in the store.
	var re *store.RoleError
	if err := tm.st.SetRole(ctx, as(tm.admin), tm.viewer.ID, store.RoleAdmin); !errors.As(err, &re) || !errors.Is(err, store.ErrForbidden) {
		t.Fatalf("a viewer changing a role: %v, want a RoleError", err)
	}
}

// Two admins demoting each other at once: one of them stays an admin.
func TestLastAdminHoldsUnderRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tm := newTeam(t)
	if err := tm.st.SetRole(ctx, as(tm.admin), tm.member.ID, store.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	go func() { errs <- tm.st.SetRole(ctx, as(tm.admin), tm.member.ID, store.RoleViewer) }()
	go func() { errs <- tm.st.SetRole(ctx, as(tm.member), tm.admin.ID, store.RoleViewer) }()
	<-errs
	<-errs
	var admins int
	tm.db.QueryRow(`SELECT count(*) FROM owners WHERE role = 'admin' AND removed_at IS NULL`).Scan(&admins)
	if admins != 1 {
		t.Fatalf("%d admins after both demoted each other, want 1", admins)
	}
}

func TestViewerWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tm := newTeam(t)
	var notes int
	count := func() int {
		tm.db.QueryRow(`SELECT count(*) FROM notes`).Scan(&notes)
		return notes
	}
	before := count()
	_, _, err := tm.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: tm.viewer.WorkspaceID, SessionID: tm.session.ID, OwnerID: tm.viewer.ID,
		Type: store.MessageNote, Subject: "x", Body: "a viewer's note"})
	var re *store.RoleError
	if !errors.As(err, &re) || re.Have != store.RoleViewer {
		t.Fatalf("a viewer's note: %v, want a RoleError", err)
	}
	if count() != before {
		t.Fatal("a refused note was written")
	}
	if _, _, err := tm.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: tm.member.WorkspaceID, SessionID: tm.session.ID, OwnerID: tm.member.ID,
		Type: store.MessageNote, Subject: "x", Body: "a member's note"}); err != nil {
		t.Fatalf("a member's note: %v", err)
	}
	if _, err := tm.st.CreateSessionAs(ctx, as(tm.viewer), store.NewSession{ProjectID: tm.project.ID, Type: "team_session", Title: "No"}); !errors.As(err, &re) {
		t.Fatalf("a viewer's session: %v", err)
	}
	if _, err := tm.st.CreateProjectAs(ctx, as(tm.member), "No"); !errors.As(err, &re) || re.Need != store.RoleAdmin {
		t.Fatalf("a member's project: %v", err)
	}
}

// TestAuditedActions: every audited action writes its one row, with who,
// where from and what, in its transaction; the same action refused writes
// none.
func TestAuditedActions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tm := newTeam(t)
	st := tm.st
	hook, _, err := st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: tm.admin.WorkspaceID, ProjectID: tm.project.ID,
		URL: "https://hooks.example.com/a", Kind: store.WebhookJSON})
	if err != nil {
		t.Fatal(err)
	}
	inv, _, err := st.CreatePersonInvite(ctx, as(tm.admin), "later@example.com", store.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimProfile(ctx, tm.admin.WorkspaceID, tm.conn.ID, "bee", "Bee"); err != nil {
		t.Fatal(err)
	}
	if err := st.Invite(ctx, tm.admin.WorkspaceID, tm.session.ID, tm.conn.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	q, _, err := st.AskQuestion(ctx, store.AgentQuestion{WorkspaceID: tm.admin.WorkspaceID, ConnectionID: tm.conn.ID, SessionType: tm.session.Type,
		SessionID: tm.session.PublicID, Text: "Ship it?", Options: []string{"yes", "no"}, IdempotencyKey: "q1"})
	if err != nil {
		t.Fatal(err)
	}
	noop := func(*store.Note) error { return nil }
	n := 0
	fresh := func() *store.Owner {
		n++
		o, err := st.CreateOwner(ctx, store.NewOwner{Email: "p" + strings.Repeat("x", n) + "@example.com", DisplayName: "P", Password: teamPassword, Role: store.RoleViewer})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	yes := 0
	cases := []struct {
		kind store.AuditKind
		// do runs the action as o.
		do func(o *store.Owner) error
		// refusedBy is someone the action is refused to (nil: no one).
		refusedBy *store.Owner
	}{
		{store.AuditSignIn, func(o *store.Owner) error {
			_, _, err := st.CreateSignIn(ctx, o, "192.0.2.9", "TestBrowser/1.0")
			return err
		}, nil},
		{store.AuditSignOut, func(o *store.Owner) error {
			_, si, err := st.CreateSignIn(ctx, o, "192.0.2.9", "TestBrowser/1.0")
			if err != nil {
				return err
			}
			return st.EndSignIn(ctx, as(o), si.ID)
		}, nil},
		{store.AuditEmailSettings, func(o *store.Owner) error {
			return st.SetEmailSettingsAs(ctx, as(o), store.EmailSettings{Replies: true})
		}, nil},
		{store.AuditPersonInvited, func(o *store.Owner) error {
			_, _, err := st.CreatePersonInvite(ctx, as(o), "new@example.com", store.RoleMember)
			return err
		}, tm.member},
		{store.AuditInviteRevoked, func(o *store.Owner) error { return st.RevokePersonInvite(ctx, as(o), inv.ID) }, tm.member},
		{store.AuditRoleChanged, func(o *store.Owner) error { return st.SetRole(ctx, as(o), fresh().ID, store.RoleMember) }, tm.member},
		{store.AuditConnGranted, func(o *store.Owner) error {
			_, _, _, err := st.CreateTokenConnectionAs(ctx, as(o), store.NewConnection{ClientName: "CLI", Scopes: []string{store.ScopeRead}}, "http://x/mcp", 0)
			return err
		}, tm.member},
		{store.AuditWebhookDisabled, func(o *store.Owner) error {
			return st.SetWebhookEndpointEnabledAs(ctx, as(o), tm.project.ID, hook.ID, false)
		}, tm.member},
		{store.AuditWebhookEnabled, func(o *store.Owner) error {
			return st.SetWebhookEndpointEnabledAs(ctx, as(o), tm.project.ID, hook.ID, true)
		}, tm.viewer},
		{store.AuditWebhookCreated, func(o *store.Owner) error {
			_, _, err := st.CreateWebhookEndpointAs(ctx, as(o), store.NewWebhookEndpoint{ProjectID: tm.project.ID, URL: "https://hooks.example.com/b", Kind: store.WebhookJSON})
			return err
		}, tm.member},
		{store.AuditProjectCreated, func(o *store.Owner) error { _, err := st.CreateProjectAs(ctx, as(o), "Second"); return err }, tm.member},
		{store.AuditProjectRenamed, func(o *store.Owner) error {
			_, err := st.RenameProjectAs(ctx, as(o), tm.project.ID, "Site 2")
			return err
		}, tm.member},
		{store.AuditProjectSettings, func(o *store.Owner) error {
			return st.SetProjectQuestionSettingsAs(ctx, as(o), tm.project.ID, store.QuestionSettings{BlockingMinutes: 0, NormalMinutes: 5, ExpiryHours: 24})
		}, tm.member},
		{store.AuditQuestionAnswer, func(o *store.Owner) error {
			_, err := st.AnswerQuestion(ctx, store.Answer{WorkspaceID: o.WorkspaceID, OwnerID: o.ID, QuestionID: q.ID, Option: &yes, RemoteAddr: "192.0.2.9", UserAgent: "TestBrowser/1.0"})
			return err
		}, tm.viewer},
		{store.AuditAgentUnseated, func(o *store.Owner) error { return st.UnseatConnectionAs(ctx, as(o), tm.project.ID, tm.conn.ID) }, tm.member},
		{store.AuditAgentSeated, func(o *store.Owner) error { return st.SeatAgentByHandleAs(ctx, as(o), tm.project.ID, "@bee") }, tm.member},
		{store.AuditSessionExported, func(o *store.Owner) error { return st.ExportSessionMailAs(ctx, as(o), tm.session, "md", noop) }, nil},
		{store.AuditWebhookDeleted, func(o *store.Owner) error { return st.DeleteWebhookEndpointAs(ctx, as(o), tm.project.ID, hook.ID) }, tm.member},
		{store.AuditConnRevoked, func(o *store.Owner) error { return st.RevokeConnectionAs(ctx, as(o), tm.conn.ID) }, tm.viewer},
		{store.AuditPersonRemoved, func(o *store.Owner) error { return st.RemovePerson(ctx, as(o), fresh().ID) }, tm.member},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			if c.refusedBy != nil {
				before := tm.db.QueryRow(`SELECT count(*) FROM audit_log`)
				var n0 int
				before.Scan(&n0)
				var re *store.RoleError
				if err := c.do(c.refusedBy); !errors.As(err, &re) {
					t.Fatalf("as %s: %v, want a RoleError", c.refusedBy.Role, err)
				}
				var n1 int
				tm.db.QueryRow(`SELECT count(*) FROM audit_log`).Scan(&n1)
				if n1 != n0 {
					t.Fatalf("a refused %s wrote %d audit rows", c.kind, n1-n0)
				}
			}
			before := tm.auditCount(t, c.kind)
			who := tm.admin
			if c.kind == store.AuditQuestionAnswer {
				who = tm.member
			}
			if err := c.do(who); err != nil {
				t.Fatal(err)
			}
			if got := tm.auditCount(t, c.kind); got != before+1 {
				t.Fatalf("%d rows of %s after it, want %d", got, c.kind, before+1)
			}
			var owner int64
			var addr, agent, subject string
			tm.db.QueryRow(`SELECT owner_id, remote_addr, user_agent, subject FROM audit_log WHERE kind = $1 ORDER BY id DESC LIMIT 1`,
				string(c.kind)).Scan(&owner, &addr, &agent, &subject)
			if owner != who.ID || addr != "192.0.2.9" || agent != "TestBrowser/1.0" || subject == "" {
				t.Fatalf("row of %s: owner %d addr %q agent %q subject %q", c.kind, owner, addr, agent, subject)
			}
		})
	}
	// A failed action (not a refused one) writes no row either: renaming
	// to a taken name.
	before := tm.auditCount(t, store.AuditProjectRenamed)
	if _, err := st.RenameProjectAs(ctx, as(tm.admin), tm.project.ID, "Second"); store.FieldErrorsOf(err) == nil {
		t.Fatalf("renaming to a taken name: %v", err)
	}
	if tm.auditCount(t, store.AuditProjectRenamed) != before {
		t.Fatal("a failed rename wrote an audit row")
	}
	// Append-only.
	tx := tm.db.Begin()
	_, err = tx.Exec(ctx, `UPDATE audit_log SET subject = 'x'`)
	tx.Rollback(ctx)
	if err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("updating the audit log: %v", err)
	}
	// Filters and pages.
	rows, err := st.ListAudit(ctx, as(tm.admin), store.AuditFilter{Kind: store.AuditWebhookEnabled})
	if err != nil || len(rows) != 1 || rows[0].ProjectName != "Site 2" {
		t.Fatalf("filtered by kind: %v %+v", err, rows)
	}
	all, err := st.ListAudit(ctx, as(tm.admin), store.AuditFilter{Limit: 3})
	if err != nil || len(all) != 3 {
		t.Fatal(err, len(all))
	}
	older, err := st.ListAudit(ctx, as(tm.admin), store.AuditFilter{Limit: 3, Before: all[2].ID})
	if err != nil || len(older) != 3 || older[0].ID >= all[2].ID {
		t.Fatal(err, older)
	}
	if _, err := st.ListAudit(ctx, as(tm.member), store.AuditFilter{}); !errors.Is(err, store.ErrForbidden) {
		t.Fatalf("a member reading the audit log: %v", err)
	}
}

func TestInvitations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tm := newTeam(t)
	st := tm.st
	inv, token, err := st.CreatePersonInvite(ctx, as(tm.admin), " New@Example.com ", store.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Email != "new@example.com" {
		t.Fatalf("email %q", inv.Email)
	}
	// Nothing exists before acceptance.
	var people int
	tm.db.QueryRow(`SELECT count(*) FROM owners WHERE email = 'new@example.com'`).Scan(&people)
	if people != 0 {
		t.Fatal("the invitee exists before accepting")
	}
	if _, _, err := st.CreatePersonInvite(ctx, as(tm.admin), "max@example.com", store.RoleMember); store.FieldErrorsOf(err) == nil {
		t.Fatalf("inviting an existing person: %v", err)
	}
	// A forged or changed token names nothing.
	for _, bad := range []string{"", "x", token + "x", strings.Replace(token, ".", "0.", 1)} {
		if _, err := st.PersonInviteOf(ctx, bad); !errors.Is(err, store.ErrInviteInvalid) {
			t.Errorf("token %q: %v", bad, err)
		}
	}
	// Refused fields leave it open.
	if _, err := st.AcceptPersonInvite(ctx, token, "", "short", store.Actor{}); len(store.FieldErrorsOf(err)) != 2 {
		t.Fatalf("bad name and password: %v", err)
	}
	o, err := st.AcceptPersonInvite(ctx, token, "Nia", teamPassword, store.Actor{RemoteAddr: "192.0.2.1", UserAgent: "B"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Role != store.RoleMember || o.Email != "new@example.com" || o.WorkspaceID != tm.admin.WorkspaceID {
		t.Fatalf("accepted: %+v", o)
	}
	if _, err := st.AcceptPersonInvite(ctx, token, "Again", teamPassword, store.Actor{}); !errors.Is(err, store.ErrInviteUsed) {
		t.Fatalf("a used link: %v", err)
	}
	if tm.auditCount(t, store.AuditPersonJoined) != 1 {
		t.Fatal("no audit row of the acceptance")
	}
	// Revoked and expired links say so.
	inv2, token2, _ := st.CreatePersonInvite(ctx, as(tm.admin), "two@example.com", store.RoleViewer)
	if err := st.RevokePersonInvite(ctx, as(tm.admin), inv2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PersonInviteOf(ctx, token2); !errors.Is(err, store.ErrInviteRevoked) {
		t.Fatalf("revoked: %v", err)
	}
	_, token3, _ := st.CreatePersonInvite(ctx, as(tm.admin), "three@example.com", store.RoleViewer)
	tm.db.Exec(`UPDATE person_invites SET expires_at = now() - interval '1 second' WHERE email = 'three@example.com'`)
	if _, err := st.AcceptPersonInvite(ctx, token3, "Three", teamPassword, store.Actor{}); !errors.Is(err, store.ErrInviteExpired) {
		t.Fatalf("expired: %v", err)
	}
	// Removed, a person keeps their notes and name, cannot sign in, and
	// their email can be invited again.
	if _, _, err := st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: o.WorkspaceID, SessionID: tm.session.ID, OwnerID: o.ID,
		Type: store.MessageNote, Subject: "hi", Body: "from Nia"}); err != nil {
		t.Fatal(err)
	}
	if err := st.RemovePerson(ctx, as(tm.admin), o.ID); err != nil {
		t.Fatal(err)
	}
	var name string
	tm.db.QueryRow(`SELECT sender_name FROM notes WHERE body = 'from Nia'`).Scan(&name)
	if name != "Nia" {
		t.Fatalf("the removed person's note says %q", name)
	}
	if _, err := st.Authenticate(ctx, "new@example.com", teamPassword); !errors.Is(err, store.ErrInvalidCredentials) {
		t.Fatalf("a removed person signs in: %v", err)
	}
	if _, err := st.OwnerByID(ctx, o.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a removed person is found: %v", err)
	}
	if _, _, err := st.CreatePersonInvite(ctx, as(tm.admin), "new@example.com", store.RoleViewer); err != nil {
		t.Fatalf("inviting a removed person's email again: %v", err)
	}
}
