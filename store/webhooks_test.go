package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// hookFixture is a mail fixture plus a second project and fixtures on the
// test's database.
type hookFixture struct {
	*mailFixture
	sql     *storetest.Fixtures
	project int64
	other   int64 // another project of the workspace
}

// requestStatements counts the statements the store sent for callers (not
// background work, such as the notifications it sends after a commit).
func (f *hookFixture) requestStatements() uint64 { return f.st.StatementCounts().Request }

func newHookFixture(t *testing.T) *hookFixture {
	t.Helper()
	ctx := context.Background()
	f := &hookFixture{}
	st := storetest.New(t)
	f.sql = storetest.SQL(t, st)
	f.mailFixture = fillMailFixture(t, st)
	f.project = f.sess.ProjectID
	p, err := st.CreateProject(ctx, f.owner.WorkspaceID, "Other")
	if err != nil {
		t.Fatal(err)
	}
	f.other = p.ID
	return f
}

func (f *hookFixture) endpoint(t *testing.T, project int64, kind, fires string) *store.WebhookEndpoint {
	t.Helper()
	e, secret, err := f.st.CreateWebhookEndpoint(context.Background(), store.NewWebhookEndpoint{WorkspaceID: f.owner.WorkspaceID,
		ProjectID: project, URL: "https://hooks.example.com/" + kind, Kind: kind, Fires: fires})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "whsec_") || len(secret) != len("whsec_")+44 {
		t.Fatalf("secret %q: want whsec_ and 32 bytes in base64", secret)
	}
	return e
}

// deliveries lists the outbox as "endpoint:note" (note 0 for a test delivery), in id order.
func (f *hookFixture) deliveries(t *testing.T) []string {
	t.Helper()
	rows := f.sql.Query(`SELECT endpoint_id, coalesce(note_id, 0) FROM webhook_deliveries ORDER BY id`)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var e, n int64
		err := r.Scan(&e, &n)
		return fmt.Sprintf("%d:%d", e, n), err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWebhookEndpointValidation(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, url, kind, fires, field string
	}{
		{"empty URL", "", "json", "", "url"},
		{"not a URL", "hooks.example.com/x", "json", "", "url"},
		{"relative", "/hooks", "json", "", "url"},
		{"ftp", "ftp://hooks.example.com/x", "json", "", "url"},
		{"javascript", "javascript:alert(1)", "json", "", "url"},
		{"mailto", "mailto:a@example.com", "json", "", "url"},
		{"no host", "https:///x", "json", "", "url"},
		{"userinfo", "https://user:pass@hooks.example.com/x", "json", "", "url"},
		{"user only", "https://user@hooks.example.com/x", "json", "", "url"},
		{"over 2 KiB", "https://hooks.example.com/" + strings.Repeat("a", 2030), "json", "", "url"},
		{"space inside", "https://hooks.example.com/a b", "json", "", "url"},
		{"fragment", "https://hooks.example.com/x#y", "json", "", "url"},
		{"unknown kind", "https://hooks.example.com/x", "xml", "", "kind"},
		{"no kind", "https://hooks.example.com/x", "", "", "kind"},
		{"unknown fires", "https://hooks.example.com/x", "slack", "analysis", "fires"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := f.st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: f.owner.WorkspaceID, ProjectID: f.project,
				URL: tc.url, Kind: tc.kind, Fires: tc.fires})
			var fe *store.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("got %v, want a refusal of %s", err, tc.field)
			}
		})
	}
	// Exactly 2 KiB is fine; surrounding spaces are trimmed; fires defaults to agents.
	long := "https://hooks.example.com/" + strings.Repeat("a", store.MaxWebhookURLLen-len("https://hooks.example.com/"))
	for _, u := range []string{long, "  http://127.0.0.1:8080/hook?x=1  "} {
		e, _, err := f.st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: f.owner.WorkspaceID, ProjectID: f.project, URL: u, Kind: "slack"})
		if err != nil {
			t.Fatalf("%.40s…: %v", u, err)
		}
		if e.URL != strings.TrimSpace(u) || e.Fires != store.FiresAgents || !e.Enabled {
			t.Fatalf("stored %+v", e)
		}
	}
	if n := len(f.deliveries(t)); n != 0 {
		t.Fatalf("%d deliveries before any note", n)
	}
}

func TestWebhookEndpointsAreScopedToWorkspaceAndProject(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	e := f.endpoint(t, f.project, store.WebhookJSON, store.FiresAgents)
	stranger, err := f.st.CreateOwner(ctx, store.NewOwner{Email: "s@example.com", DisplayName: "S", Password: "long enough password", WorkspaceName: "Elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	ws := f.owner.WorkspaceID
	for _, who := range []struct {
		name          string
		ws, projectID int64
	}{
		{"another workspace", stranger.WorkspaceID, f.project},
		{"another project", ws, f.other},
	} {
		t.Run(who.name, func(t *testing.T) {
			for name, err := range map[string]error{
				"get":     second(f.st.GetWebhookEndpoint(ctx, who.ws, who.projectID, e.ID)),
				"disable": f.st.SetWebhookEndpointEnabled(ctx, who.ws, who.projectID, e.ID, false),
				"enable":  f.st.SetWebhookEndpointEnabled(ctx, who.ws, who.projectID, e.ID, true),
				"test":    f.st.QueueWebhookTest(ctx, who.ws, who.projectID, e.ID),
				"delete":  f.st.DeleteWebhookEndpoint(ctx, who.ws, who.projectID, e.ID),
			} {
				if !errors.Is(err, store.ErrNotFound) {
					t.Errorf("%s: %v, want ErrNotFound", name, err)
				}
			}
			list, err := f.st.ListWebhookEndpoints(ctx, who.ws, who.projectID)
			if err != nil || len(list) != 0 {
				t.Errorf("list: %v %v", list, err)
			}
			log, err := f.st.ListWebhookDeliveries(ctx, who.ws, who.projectID, e.ID)
			if err != nil || len(log) != 0 {
				t.Errorf("log: %v %v", log, err)
			}
			_, _, err = f.st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: who.ws, ProjectID: f.project + f.other + 100,
				URL: "https://x.example.com", Kind: "json"})
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("create in a project that is not there: %v", err)
			}
		})
	}
	got, err := f.st.GetWebhookEndpoint(ctx, ws, f.project, e.ID)
	if err != nil || !got.Enabled || len(f.deliveries(t)) != 0 {
		t.Fatalf("the endpoint changed: %+v %v %v", got, err, f.deliveries(t))
	}
	if _, _, err := f.st.CreateWebhookEndpoint(ctx, store.NewWebhookEndpoint{WorkspaceID: stranger.WorkspaceID, ProjectID: f.project,
		URL: "https://x.example.com", Kind: "json"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("create in another workspace's project: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestNotesQueueDeliveries checks which notes fire which endpoints, and that
// the outbox rows, the senders' wake-up and the note are written by the same
// statements as before: posting a note takes as many round trips with
// endpoints as without.
func TestNotesQueueDeliveries(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()

	before := f.requestStatements()
	f.agentNote(t, "no endpoints yet")
	plain := f.requestStatements() - before

	agents := f.endpoint(t, f.project, store.WebhookSlack, store.FiresAgents)
	all := f.endpoint(t, f.project, store.WebhookJSON, store.FiresAll)
	off := f.endpoint(t, f.project, store.WebhookJSON, store.FiresAll)
	if err := f.st.SetWebhookEndpointEnabled(ctx, f.owner.WorkspaceID, f.project, off.ID, false); err != nil {
		t.Fatal(err)
	}
	elsewhere := f.endpoint(t, f.other, store.WebhookJSON, store.FiresAll)

	wake := wakeUps(t, f.st)
	before = f.requestStatements()
	agentNote := f.agentNote(t, "from the agent")
	if n := f.requestStatements() - before; n != plain {
		t.Fatalf("an agent note with endpoints took %d statements, %d without", n, plain)
	}
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("no NOTIFY on the webhooks channel after a note queued deliveries")
	}
	owner := store.OwnerNote{WorkspaceID: f.owner.WorkspaceID, SessionID: f.sess.ID, OwnerID: f.owner.ID, Type: store.MessageNote, Subject: "s", Body: "from the owner"}
	ownerNote, _, err := f.st.PostOwnerNote(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	reply := owner
	reply.Type, reply.ReplyTo, reply.Body = store.MessageReply, agentNote, "a reply"
	replyNote, _, err := f.st.PostOwnerNote(ctx, reply)
	if err != nil {
		t.Fatal(err)
	}
	analysis := owner
	analysis.Type, analysis.Body = store.MessageAnalysis, "internal"
	if _, _, err := f.st.PostOwnerNote(ctx, analysis); err != nil {
		t.Fatal(err)
	}
	// A retry of the agent's note is a duplicate: nothing more is queued.
	if _, dup, err := f.st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: f.owner.WorkspaceID, ConnectionID: f.connID,
		SessionType: f.sess.Type, SessionID: f.sess.PublicID, Subject: "from the agent", Body: "b", IdempotencyKey: "from the agent"}); err != nil || !dup {
		t.Fatalf("retry: dup %v err %v", dup, err)
	}
	want := []string{
		fmt.Sprintf("%d:%d", agents.ID, agentNote), fmt.Sprintf("%d:%d", all.ID, agentNote),
		fmt.Sprintf("%d:%d", all.ID, ownerNote.ID), fmt.Sprintf("%d:%d", all.ID, replyNote.ID),
	}
	if got := f.deliveries(t); !slices.Equal(got, want) {
		t.Fatalf("outbox %v, want %v (disabled %d and other project's %d get none; analysis fires nothing)", got, want, off.ID, elsewhere.ID)
	}

	// A note that rolls back leaves no delivery: an owner note to a session
	// that is not the workspace's fails inside the same transaction.
	if _, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: f.owner.WorkspaceID + 1000, SessionID: f.sess.ID, OwnerID: f.owner.ID,
		Type: store.MessageNote, Subject: "s", Body: "x"}); err == nil {
		t.Fatal("a note to another workspace's session was accepted")
	}
	if got := f.deliveries(t); len(got) != len(want) {
		t.Fatalf("outbox after a refused note: %v", got)
	}
}

// wakeUps runs a listener that wakes on the webhooks topic and on each
// connection, as a replica's sender does, and returns a channel that
// receives each wake-up.
func wakeUps(t *testing.T, st *store.Store) <-chan struct{} {
	t.Helper()
	out := make(chan struct{}, 100)
	l, _ := quietListener(st)
	store.Listen(l, store.WebhookTopic, func(struct{}) { out <- struct{}{} })
	l.Watch(func(connected bool) {
		if connected {
			out <- struct{}{}
		}
	})
	t.Cleanup(startListener(l))
	<-l.Ready()
	// The sender is woken once when the listener connects (notifications
	// sent while it was away are lost): that one is not the test's.
	select {
	case <-out:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up on connecting")
	}
	return out
}

func TestEnableAndTestDeliveryWakeSenders(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	e := f.endpoint(t, f.project, store.WebhookJSON, store.FiresAgents)
	wake := wakeUps(t, f.st)
	expectWake := func(what string) {
		t.Helper()
		select {
		case <-wake:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no NOTIFY on the webhooks channel", what)
		}
	}
	if err := f.st.QueueWebhookTest(ctx, f.owner.WorkspaceID, f.project, e.ID); err != nil {
		t.Fatal(err)
	}
	expectWake("send test")
	if err := f.st.SetWebhookEndpointEnabled(ctx, f.owner.WorkspaceID, f.project, e.ID, false); err != nil {
		t.Fatal(err)
	}
	if err := f.st.QueueWebhookTest(ctx, f.owner.WorkspaceID, f.project, e.ID); !errors.Is(err, store.ErrWebhookDisabled) {
		t.Fatalf("test of a disabled endpoint: %v", err)
	}
	if err := f.st.SetWebhookEndpointEnabled(ctx, f.owner.WorkspaceID, f.project, e.ID, true); err != nil {
		t.Fatal(err)
	}
	expectWake("enable")
	if got := f.deliveries(t); !slices.Equal(got, []string{fmt.Sprintf("%d:0", e.ID)}) {
		t.Fatalf("outbox %v, want one test delivery", got)
	}
	select {
	case <-wake:
		t.Fatal("a NOTIFY nobody asked for")
	default:
	}
}
