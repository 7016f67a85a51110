package store_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// inboxWorld is a workspace with two owners (olive, otto), two projects (P
// with session s1, Q with s2), two agents invited to both sessions (ada,
// bea), and another workspace with a note of its own.
type inboxWorld struct {
	st           *store.Store
	ws, olive    int64
	otto         int64
	p, q         *store.Project
	s1, s2       *store.Session
	ada, bea     int64 // connections
	slugA, slugB string
}

func newInboxWorld(t *testing.T) *inboxWorld {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	o, err := st.CreateOwner(ctx, store.NewOwner{Email: "o@example.com", DisplayName: "Olive", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	w := &inboxWorld{st: st, ws: o.WorkspaceID, olive: o.ID}
	w.otto = storetest.SQL(t, st).InsertOwner(w.ws, "Otto")
	if w.p, err = st.CreateProject(ctx, w.ws, "P"); err != nil {
		t.Fatal(err)
	}
	if w.q, err = st.CreateProject(ctx, w.ws, "Q"); err != nil {
		t.Fatal(err)
	}
	if w.s1, err = st.CreateSession(ctx, store.NewSession{WorkspaceID: w.ws, ProjectID: w.p.ID, Type: "team_session", Title: "S1"}); err != nil {
		t.Fatal(err)
	}
	if w.s2, err = st.CreateSession(ctx, store.NewSession{WorkspaceID: w.ws, ProjectID: w.q.ID, Type: "team_session", Title: "S2"}); err != nil {
		t.Fatal(err)
	}
	agent := func(handle string) (int64, string) {
		c, err := st.CreateConnection(ctx, store.NewConnection{WorkspaceID: w.ws, OwnerID: w.olive, ClientName: "cli",
			Scopes: store.AllScopes, ProjectIDs: []int64{w.p.ID, w.q.ID}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := st.ClaimProfile(ctx, w.ws, c.ID, handle, strings.ToUpper(handle[:1])+handle[1:])
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []*store.Session{w.s1, w.s2} {
			if err := st.Invite(ctx, w.ws, s.ID, c.ID, store.RoleContributor); err != nil {
				t.Fatal(err)
			}
		}
		return c.ID, p.SenderSlug
	}
	w.ada, w.slugA = agent("ada")
	w.bea, w.slugB = agent("bea")
	return w
}

// agentNote posts as an agent, to the whole session (to "") or to a slug.
func (w *inboxWorld) agentNote(t *testing.T, conn int64, s *store.Session, to, subject string) int64 {
	t.Helper()
	n, _, err := w.st.PostAgentNote(context.Background(), store.AgentNote{WorkspaceID: w.ws, ConnectionID: conn, SessionType: s.Type,
		SessionID: s.PublicID, To: to, Subject: subject, Body: "body of " + subject, IdempotencyKey: subject})
	if err != nil {
		t.Fatal(err)
	}
	return n.ID
}

func (w *inboxWorld) ownerNote(t *testing.T, owner int64, s *store.Session, typ, subject string) int64 {
	t.Helper()
	n, _, err := w.st.PostOwnerNote(context.Background(), store.OwnerNote{WorkspaceID: w.ws, SessionID: s.ID, OwnerID: owner,
		Type: typ, Subject: subject, Body: "body"})
	if err != nil {
		t.Fatal(err)
	}
	return n.ID
}

func inboxIDs(notes []store.InboxNote) []int64 {
	ids := make([]int64, len(notes))
	for i, n := range notes {
		ids[i] = n.ID
	}
	return ids
}

// TestInbox: what an owner's inbox holds, for every filter, paged, and
// nothing of another workspace.
func TestInbox(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	adaAll := w.agentNote(t, w.ada, w.s1, "", "ada to all in S1")
	beaAll := w.agentNote(t, w.bea, w.s2, "", "bea to all in S2")
	toOlive := w.agentNote(t, w.ada, w.s2, store.OwnerSlug(w.olive), "ada to olive")
	toOtto := w.agentNote(t, w.bea, w.s1, store.OwnerSlug(w.otto), "bea to otto")
	w.agentNote(t, w.ada, w.s1, w.slugB, "ada to bea")               // agent to agent: not for owners
	w.ownerNote(t, w.olive, w.s1, store.MessageNote, "olive to all") // her own
	w.ownerNote(t, w.otto, w.s1, store.MessageNote, "otto to all")   // an owner's note to the agents
	w.ownerNote(t, w.otto, w.s2, store.MessageAnalysis, "otto thinks")
	ottoToOlive, _, err := w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: w.ws, SessionID: w.s2.ID, OwnerID: w.otto,
		Type: store.MessageReply, ReplyTo: w.ownerNote(t, w.olive, w.s2, store.MessageNote, "olive asks"), Body: "otto answers"})
	if err != nil {
		t.Fatal(err)
	}
	// Another workspace: an owner and agent note there never show.
	ws2, owner2 := storetest.SQL(t, w.st).InsertWorkspace("Other")
	p2, _ := w.st.CreateProject(ctx, ws2, "P2")
	s3, _ := w.st.CreateSession(ctx, store.NewSession{WorkspaceID: ws2, ProjectID: p2.ID, Type: "team_session", Title: "S3"})
	if _, _, err := w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws2, SessionID: s3.ID, OwnerID: owner2, Type: store.MessageNote, Body: "x"}); err != nil {
		t.Fatal(err)
	}

	all := []int64{ottoToOlive.ID, toOtto, toOlive, beaAll, adaAll}
	for _, c := range []struct {
		name string
		f    store.InboxFilter
		want []int64
	}{
		{"everything for owners, newest first", store.InboxFilter{}, all},
		{"replies to me", store.InboxFilter{Mine: true}, []int64{ottoToOlive.ID, toOlive}},
		{"one project", store.InboxFilter{ProjectID: w.q.ID}, []int64{ottoToOlive.ID, toOlive, beaAll}},
		{"one agent", store.InboxFilter{AgentID: w.bea}, []int64{toOtto, beaAll}},
		{"questions waiting", store.InboxFilter{Questions: true}, nil},
		{"unread", store.InboxFilter{Unread: true}, all},
		{"unread, one project, one agent", store.InboxFilter{Unread: true, ProjectID: w.p.ID, AgentID: w.bea}, []int64{toOtto}},
		{"older than", store.InboxFilter{Before: toOlive}, []int64{beaAll, adaAll}},
		{"newer than", store.InboxFilter{After: toOlive}, []int64{ottoToOlive.ID, toOtto}},
		{"another project's id", store.InboxFilter{ProjectID: p2.ID}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := w.st.Inbox(ctx, w.ws, w.olive, c.f, 50)
			if err != nil {
				t.Fatal(err)
			}
			if ids := inboxIDs(got); !slices.Equal(ids, c.want) {
				t.Fatalf("inbox %v, want %v", ids, c.want)
			}
		})
	}
	// Otto's inbox has olive's reply... no: otto's reply to olive is his own.
	got, err := w.st.Inbox(ctx, w.ws, w.otto, store.InboxFilter{}, 50)
	if err != nil {
		t.Fatal(err)
	}
	if ids := inboxIDs(got); !slices.Equal(ids, []int64{toOtto, toOlive, beaAll, adaAll}) {
		t.Fatalf("otto's inbox %v", ids)
	}
	// Another workspace's owner sees none of it.
	if got, err := w.st.Inbox(ctx, ws2, owner2, store.InboxFilter{}, 50); err != nil || len(got) != 0 {
		t.Fatalf("the other workspace's inbox %v %v", inboxIDs(got), err)
	}
	// An owner asking with another workspace's id gets nothing.
	if got, err := w.st.Inbox(ctx, ws2, w.olive, store.InboxFilter{}, 50); err != nil || len(got) != 0 {
		t.Fatalf("olive in the other workspace %v %v", inboxIDs(got), err)
	}

	// Paging: limit+1 rows tell that there is more.
	page, err := w.st.Inbox(ctx, w.ws, w.olive, store.InboxFilter{}, 2)
	if err != nil || !slices.Equal(inboxIDs(page), all[:3]) {
		t.Fatalf("first page %v %v", inboxIDs(page), err)
	}
	next, err := w.st.Inbox(ctx, w.ws, w.olive, store.InboxFilter{Before: page[1].ID}, 2)
	if err != nil || !slices.Equal(inboxIDs(next), all[2:5]) {
		t.Fatalf("second page %v %v", inboxIDs(next), err)
	}

	// Where each is, and read state: olive reads S1.
	row := page[0]
	if row.SessionTitle != "S2" || row.ProjectName != "Q" || row.ProjectID != w.q.ID || !row.Unread || row.Parent == nil {
		t.Fatalf("row %+v", row)
	}
	if _, err := w.st.MarkMailRead(ctx, w.olive, w.s1.ID, math.MaxInt32); err != nil {
		t.Fatal(err)
	}
	unread, err := w.st.Inbox(ctx, w.ws, w.olive, store.InboxFilter{Unread: true}, 50)
	if err != nil || !slices.Equal(inboxIDs(unread), []int64{ottoToOlive.ID, toOlive, beaAll}) {
		t.Fatalf("unread after reading S1: %v %v", inboxIDs(unread), err)
	}
	everything, _ := w.st.Inbox(ctx, w.ws, w.olive, store.InboxFilter{}, 50)
	for _, n := range everything {
		if n.Unread != (n.SessionID == w.s2.ID) {
			t.Errorf("note %d of session %d unread %v", n.ID, n.SessionID, n.Unread)
		}
	}
}

// TestMarkAllRead: one statement moves every session's mark (or one
// project's), and the counts follow.
func TestMarkAllRead(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	w.agentNote(t, w.ada, w.s1, "", "one")
	w.agentNote(t, w.ada, w.s2, "", "two")
	counts := func() (total, inbox int) {
		t.Helper()
		u, err := w.st.UnreadMail(ctx, w.ws, w.olive)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range u {
			total += s.Unread
			inbox += s.Inbox
		}
		return
	}
	if total, inbox := counts(); total != 2 || inbox != 2 {
		t.Fatalf("unread %d, inbox %d", total, inbox)
	}
	if moved, err := w.st.MarkAllRead(ctx, w.ws, w.olive, w.q.ID); err != nil || moved != 1 {
		t.Fatalf("project Q: %d moved, %v", moved, err)
	}
	if total, _ := counts(); total != 1 {
		t.Fatalf("after Q: %d unread", total)
	}
	if moved, err := w.st.MarkAllRead(ctx, w.ws, w.olive, 0); err != nil || moved != 1 {
		t.Fatalf("all: %d moved, %v", moved, err)
	}
	if moved, err := w.st.MarkAllRead(ctx, w.ws, w.olive, 0); err != nil || moved != 0 {
		t.Fatalf("again: %d moved, %v", moved, err)
	}
	if total, _ := counts(); total != 0 {
		t.Fatalf("after all: %d unread", total)
	}
	// Another workspace's owner moves nothing here.
	_, stranger := storetest.SQL(t, w.st).InsertWorkspace("Other")
	w.agentNote(t, w.ada, w.s1, "", "three")
	if moved, err := w.st.MarkAllRead(ctx, w.ws, stranger, 0); err != nil || moved != 0 {
		t.Fatalf("a stranger moved %d marks (%v)", moved, err)
	}
}

// TestInboxPlans: the inbox reads its partial index newest first, and the
// unread views read only what is above each session's mark, also in
// generic plans.
func TestInboxPlans(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	db := storetest.SQL(t, w.st)
	// A few notes here, then a busy workspace's many.
	w.agentNote(t, w.ada, w.s1, "", "quiet")
	busyWS, busyOwner := db.InsertWorkspace("Busy")
	busyP, _ := w.st.CreateProject(ctx, busyWS, "B")
	busyS, _ := w.st.CreateSession(ctx, store.NewSession{WorkspaceID: busyWS, ProjectID: busyP.ID, Type: "team_session", Title: "B"})
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, recipient_slug, message_type, subject, body)
		SELECT $1, $2, 'owner', $3::bigint, owner_slug($3::bigint), 'B', owner_slug(1), 'reply', 's', 'b'
		FROM generate_series(1, 20000) g`, busyWS, busyS.ID, busyOwner)
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name, message_type, subject, body)
		SELECT $1, CASE WHEN g % 2 = 0 THEN $2::bigint ELSE $3::bigint END, 'agent', $4::bigint, $5, 'Ada', 'note', 's', 'b'
		FROM generate_series(1, 20000) g`, w.ws, w.s1.ID, w.s2.ID, w.ada, w.slugA)
	if _, err := w.st.MarkAllRead(ctx, w.ws, w.olive, 0); err != nil {
		t.Fatal(err)
	}
	db.Exec(`ANALYZE notes`)
	tx := db.Begin()
	defer tx.Rollback(ctx)
	explain := func(sql string, args ...any) string {
		t.Helper()
		return genericPlan(t, tx, sql, args...)
	}
	args := []any{w.ws, w.olive, int64(math.MaxInt64), int64(0), int64(0), int64(0), false, store.OwnerSlug(w.olive), false, 51}
	if plan := explain(store.InboxAllSQL, args...); !strings.Contains(plan, "notes_inbox_idx") {
		t.Errorf("the inbox does not read notes_inbox_idx:\n%s", plan)
	}
	quiet := append([]any{busyWS + 1000}, args[1:]...)
	if plan := explain(store.InboxAllSQL, quiet...); !strings.Contains(plan, "notes_inbox_idx") {
		t.Errorf("a quiet workspace's inbox does not read notes_inbox_idx:\n%s", plan)
	}
	// Everything read: the unread views touch no note.
	for name, plan := range map[string]string{
		"inbox, unread": explain(store.InboxUnreadSQL, args...),
		"unread counts": explain(store.UnreadMailSQL, w.ws, w.olive),
	} {
		if !strings.Contains(plan, "notes_session_idx") || strings.Contains(plan, "rows=10000") {
			t.Errorf("%s walks read notes:\n%s", name, plan)
		}
	}
	tx.Rollback(ctx)
	if u, err := w.st.UnreadMail(ctx, w.ws, w.olive); err != nil || len(u) != 0 {
		t.Fatalf("unread %v %v", u, err)
	}
}
