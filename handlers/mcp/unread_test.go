package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// unreadHint is the "unread" member of a result, as `osfoundry agent hook`
// reads it.
type unreadHint struct {
	Total    int    `json:"total"`
	Hint     string `json:"hint"`
	Sessions []struct {
		SessionType string `json:"session_type"`
		SessionID   string `json:"session_id"`
		Count       int    `json:"count"`
	} `json:"sessions"`
}

// unreadOf returns a result's unread hint (nil without one), checking that
// its data and its last text block agree (the block is a line break and the
// hint's sentence) and that a result without a hint has no hint line.
func unreadOf(t *testing.T, res *mcpsdk.CallToolResult) *unreadHint {
	t.Helper()
	var v struct {
		Unread *unreadHint `json:"unread"`
	}
	if res.StructuredContent != nil {
		if err := jsonInto(res.StructuredContent, &v); err != nil {
			t.Fatal(err)
		}
	}
	last := res.Content[len(res.Content)-1].(*mcpsdk.TextContent).Text
	if v.Unread == nil {
		if strings.Contains(last, "unread") {
			t.Fatalf("a hint line without unread data: %q", last)
		}
		return nil
	}
	line, ok := strings.CutPrefix(last, "\n")
	if len(res.Content) < 2 || !ok || !strings.HasPrefix(line, strconv.Itoa(v.Unread.Total)+" unread note") ||
		!strings.HasSuffix(line, "with read_session_mail.") || strings.Contains(line, "\n") || v.Unread.Hint != line {
		t.Fatalf("unread %s, last text %q", mustJSON(v.Unread), last)
	}
	for _, s := range v.Unread.Sessions[:min(3, len(v.Unread.Sessions))] {
		if !strings.Contains(last, fmt.Sprintf("%s %s (%d)", s.SessionType, s.SessionID, s.Count)) {
			t.Fatalf("hint line %q does not name %+v", last, s)
		}
	}
	return v.Unread
}

// newestID is the id of the newest note of a session.
func newestID(t *testing.T, e *env, s *store.Session) int64 {
	t.Helper()
	var id int64
	if err := e.sql().QueryRow(`SELECT max(id) FROM notes WHERE session_id = $1`, s.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// counts is a hint as "session_id:count" in its order, "" for none.
func counts(u *unreadHint) string {
	if u == nil {
		return ""
	}
	var parts []string
	for _, s := range u.Sessions {
		parts = append(parts, fmt.Sprintf("%s:%d", s.SessionID, s.Count))
	}
	return strings.Join(parts, " ")
}

// TestUnreadHint: what counts as unread (replies to the agent's slug from
// owners and agents, owners' notes to the whole session, in sessions it is
// invited to, newer than the newest note read_session_mail returned to it
// there), what never does (its own notes, analysis notes, other agents'
// notes to the whole session, replies to others), on every result (refusals
// too), and how read_session_mail clears it, whole or in part.
func TestUnreadHint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	p := e.project(ws, "P")
	a := e.agent(ws, owner, store.AllScopes, p)
	b := e.agent(ws, owner, store.AllScopes, p)
	slugA, slugB := a.claim("alice"), b.claim("bob")
	s1, s2, s3 := e.session(ws, p, "team_session"), e.session(ws, p, "agent_session"), e.session(ws, p, "loop_session")
	for _, s := range []*store.Session{s1, s2} {
		a.invite(s, store.RoleContributor)
	}
	for _, s := range []*store.Session{s1, s2, s3} {
		b.invite(s, store.RoleContributor)
	}

	res := a.call("list_sessions", nil)
	if u := unreadOf(t, res); u != nil || len(res.Content) != 1 {
		t.Fatalf("no mail yet: unread %+v, %d text blocks", u, len(res.Content))
	}

	// Not for alice: her own note, analysis, bob's note to everyone, a reply
	// to bob, a session she is not invited to.
	a.ok("post_session_note", with(ref(s1), "subject", "mine", "body", "b", "idempotency_key", "a1"), nil)
	e.ownerNote(s1, owner, nil, "analysis", "owners only")
	b.ok("post_session_note", with(ref(s1), "subject", "bob to all", "body", "b", "idempotency_key", "b1"), nil)
	e.ownerNote(s1, owner, &slugB, "reply", "to bob")
	e.ownerNote(s3, owner, nil, "note", "elsewhere")
	if u := unreadOf(t, a.call("list_sessions", nil)); u != nil {
		t.Fatalf("nothing addressed to alice, yet unread %s", mustJSON(u))
	}

	// For alice: an owner's reply in s2, then in s1 an owner's note to
	// everyone and bob's reply to her.
	e.ownerNote(s2, owner, &slugA, "reply", "owner to alice")
	e.ownerNote(s1, owner, nil, "note", "owner to all")
	b.ok("reply_to_sender", with(ref(s1), "to", slugA, "subject", "bob to alice", "body", "b", "idempotency_key", "b2"), nil)

	res = a.call("set_status", map[string]any{"task": "t"})
	u := unreadOf(t, res)
	if u == nil || u.Total != 3 || counts(u) != s1.PublicID+":2 "+s2.PublicID+":1" {
		t.Fatalf("unread %s, want s1 (2, newest) then s2 (1)", mustJSON(u))
	}
	line := strings.TrimPrefix(res.Content[len(res.Content)-1].(*mcpsdk.TextContent).Text, "\n")
	if want := fmt.Sprintf("3 unread notes for you: team_session %s (2), agent_session %s (1). Read them with read_session_mail.", s1.PublicID, s2.PublicID); line != want {
		t.Fatalf("hint line %q, want %q", line, want)
	}
	// A client that joins the text blocks with no separator (Copilot CLI)
	// still shows the hint on a line of its own; one that hands the model
	// only the structured content (Codex) gives it the same sentence.
	var joined strings.Builder
	for _, c := range res.Content {
		joined.WriteString(c.(*mcpsdk.TextContent).Text)
	}
	if !strings.HasSuffix(joined.String(), "}\n"+line) || u.Hint != line {
		t.Fatalf("joined text blocks %q, structured hint %q", joined.String(), u.Hint)
	}
	// The tool's own JSON stays the first text block, unchanged.
	var st map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcpsdk.TextContent).Text), &st); err != nil || st["task"] != "t" || st["unread"] != nil {
		t.Fatalf("first text block %v %v", st, err)
	}
	// Refusals carry it too: of the tool (not invited) and of the arguments.
	for _, args := range []struct {
		tool string
		args map[string]any
	}{{"read_session_state", ref(s3)}, {"set_status", map[string]any{"task": 5}}} {
		res := a.call(args.tool, args.args)
		if !res.IsError || counts(unreadOf(t, res)) != counts(u) {
			t.Fatalf("%s refused: isError %v, %s", args.tool, res.IsError, mustJSON(res))
		}
	}

	// Reading s2 clears s2, and the read's own result already says so.
	res = a.call("read_session_mail", ref(s2))
	if got := counts(unreadOf(t, res)); got != s1.PublicID+":2" {
		t.Fatalf("after reading s2: %q", got)
	}
	// Reading s1 below its newest note leaves that note unread.
	var mail mailResult
	bobReply := newestID(t, e, s1)
	res = a.call("read_session_mail", with(ref(s1), "before_id", bobReply))
	if err := jsonInto(res.StructuredContent, &mail); err != nil || mail.Notes[0].Subject != "owner to all" {
		t.Fatalf("older page %s %v", mustJSON(res.StructuredContent), err)
	}
	if got := counts(unreadOf(t, res)); got != s1.PublicID+":1" {
		t.Fatalf("after the older page: %q, want bob's reply alone", got)
	}
	if got := counts(unreadOf(t, a.call("list_agents", nil))); got != s1.PublicID+":1" {
		t.Fatalf("the next call after the older page: %q", got)
	}
	res = a.call("read_session_mail", ref(s1))
	if u := unreadOf(t, res); u != nil {
		t.Fatalf("all read: %s", mustJSON(u))
	}
	if u := unreadOf(t, a.call("list_sessions", nil)); u != nil {
		t.Fatalf("all read, next call: %s", mustJSON(u))
	}
	// Unread is what is newer than the newest note returned: a page from
	// the top catches up whatever its size (a client reads from the top
	// until it meets an id it has seen). Receipts stay exact.
	first := e.ownerNote(s1, owner, nil, "note", "again 1")
	e.ownerNote(s1, owner, nil, "note", "again 2")
	if got := counts(unreadOf(t, a.call("list_sessions", nil))); got != s1.PublicID+":2" {
		t.Fatalf("two new: %q", got)
	}
	if u := unreadOf(t, a.call("read_session_mail", with(ref(s1), "limit", 1))); u != nil {
		t.Fatalf("after the top page of one: %s", mustJSON(u))
	}
	var receipted bool
	if err := e.sql().QueryRow(`SELECT EXISTS (SELECT 1 FROM note_receipts WHERE note_id = $1)`, first).Scan(&receipted); err != nil || receipted {
		t.Fatalf("a receipt for a note never returned: %v %v", receipted, err)
	}

	// A session she is no longer invited to stops counting.
	e.ownerNote(s2, owner, nil, "note", "after")
	if got := counts(unreadOf(t, a.call("list_sessions", nil))); got != s2.PublicID+":1" {
		t.Fatalf("new owner note: %q", got)
	}
	if err := e.st.RemoveInvitation(e.ctx, ws, s2.ID, a.conn.ID); err != nil {
		t.Fatal(err)
	}
	if u := unreadOf(t, a.call("list_sessions", nil)); u != nil {
		t.Fatalf("uninvited: %s", mustJSON(u))
	}
	// Invited again: what she read stays read (her read mark remains).
	a.invite(s2, store.RoleContributor)
	if got := counts(unreadOf(t, a.call("list_sessions", nil))); got != s2.PublicID+":1" {
		t.Fatalf("invited again: %q, want only the note she never read", got)
	}

	// Receipts: one per returned note alice did not write.
	rows := e.sql().Query(`SELECT n.subject FROM note_receipts r JOIN notes n ON n.id = r.note_id WHERE r.connection_id = $1 ORDER BY n.id`, a.conn.ID)
	subjects, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := "bob to all,owner to alice,owner to all,bob to alice,again 2"; strings.Join(subjects, ",") != want {
		t.Fatalf("receipts of %v, want %s", subjects, want)
	}
}

// TestUnreadHintManySessions: the line names three sessions and counts the
// rest; the data lists up to store.MaxUnreadListed, newest first, and the
// total counts them all.
func TestUnreadHintManySessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	p := e.project(ws, "P")
	a := e.agent(ws, owner, store.AllScopes, p)
	a.claim("alice")
	var ids []string
	for i := range store.MaxUnreadListed + 2 {
		s := e.session(ws, p, "team_session")
		a.invite(s, store.RoleContributor)
		for range i%2 + 1 {
			e.ownerNote(s, owner, nil, "note", "hello")
		}
		ids = append([]string{s.PublicID}, ids...)
	}
	res := a.call("list_sessions", nil)
	u := unreadOf(t, res)
	if u == nil || u.Total != 18 || len(u.Sessions) != store.MaxUnreadListed || u.Sessions[0].SessionID != ids[0] || u.Sessions[9].SessionID != ids[9] {
		t.Fatalf("unread %s", mustJSON(u))
	}
	line := res.Content[len(res.Content)-1].(*mcpsdk.TextContent).Text
	if !strings.Contains(line, fmt.Sprintf("(1), team_session %s (2) and 9 more sessions. Read them", ids[2])) {
		t.Fatalf("line %q", line)
	}
}

// TestReadReceipts: eight reads of the same mail racing on two replicas
// record one receipt per note, announce each owner's note once on
// osfoundry_receipts (ids only), and the receipts outlive the connection's
// revocation.
func TestReadReceipts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm := e.team("team_session", store.RoleContributor, "alice", "bob")
	ws, owner, s := tm.ws, tm.owner, tm.s
	a, b := tm.agents[0], tm.agents[1]
	slugA := tm.slugs[0]
	var own postResult
	a.ok("post_session_note", with(ref(s), "subject", "mine", "body", "b", "idempotency_key", "a1"), &own)
	ownerNotes := []int64{e.ownerNote(s, owner, nil, "note", "o1"), e.ownerNote(s, owner, &slugA, "reply", "o2"), e.ownerNote(s, owner, nil, "note", "o3")}
	var fromB postResult
	b.ok("post_session_note", with(ref(s), "subject", "bob", "body", "b", "idempotency_key", "b1"), &fromB)

	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	listen, err := pgx.Connect(ctx, e.sql().DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer listen.Close(context.Background())
	if _, err := listen.Exec(ctx, "LISTEN "+store.ReceiptsChannel); err != nil {
		t.Fatal(err)
	}

	urls := []string{e.mcpURL(), e.replica(t).URL + "/mcp"}
	const reads = 8
	totals := make([]int, reads)
	errs := concurrently(reads, func(i int) error {
		var v struct {
			Notes  []json.RawMessage `json:"notes"`
			Unread *unreadHint       `json:"unread"`
		}
		err := callInto(urls[i%2], a.token, "read_session_mail", ref(s), &v)
		if v.Unread != nil {
			totals[i] = v.Unread.Total
		}
		if err == nil && len(v.Notes) != 5 {
			err = fmt.Errorf("%d notes", len(v.Notes))
		}
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if totals[i] != 0 {
			t.Fatalf("read %d still counts %d unread", i, totals[i])
		}
	}

	// One receipt per note alice did not write, whichever read was first.
	rows := e.sql().Query(`SELECT note_id, count(*) FROM note_receipts WHERE connection_id = $1 GROUP BY note_id ORDER BY note_id`, a.conn.ID)
	var got []string
	for rows.Next() {
		var note, n int64
		if err := rows.Scan(&note, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d×%d", note, n))
	}
	rows.Close()
	want := []string{fmt.Sprintf("%d×1", ownerNotes[0]), fmt.Sprintf("%d×1", ownerNotes[1]), fmt.Sprintf("%d×1", ownerNotes[2]), fmt.Sprintf("%d×1", fromB.ID)}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("receipts %v, want %v (none for alice's own note %d)", got, want, own.ID)
	}

	// One notification per owner's note; none for bob's note. A sentinel sent now arrives after every notification of a
	// transaction that committed before it.
	e.sql().Exec(`SELECT pg_notify($1, 'sentinel')`, store.ReceiptsChannel)
	var heard []string
	for {
		n, err := listen.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("notifications so far %v: %v", heard, err)
		}
		if n.Payload == "sentinel" {
			break
		}
		heard = append(heard, n.Payload)
	}
	var wantHeard []string
	for _, id := range ownerNotes {
		wantHeard = append(wantHeard, fmt.Sprintf("%d:%d", s.ID, id))
	}
	slices.Sort(heard)
	slices.Sort(wantHeard)
	if strings.Join(heard, " ") != strings.Join(wantHeard, " ") {
		t.Fatalf("heard %v, want %v", heard, wantHeard)
	}

	// Revoked, alice's receipts stay, with her name.
	if err := e.st.RevokeConnection(e.ctx, ws, a.conn.ID); err != nil {
		t.Fatal(err)
	}
	receipts, err := e.st.NoteReceipts(e.ctx, ws, s.ID, append(ownerNotes, fromB.ID))
	if err != nil || len(receipts) != 3 {
		t.Fatalf("receipts after revocation: %+v %v (owners' notes only)", receipts, err)
	}
	for i, r := range receipts {
		if r.NoteID != ownerNotes[i] || r.ConnectionID != a.conn.ID || r.Reader != "ALICE" || r.ReadAt.IsZero() {
			t.Fatalf("receipt %d: %+v", i, r)
		}
	}
}
