package mcp_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

type mailResult struct {
	Notes []struct {
		ID          int64   `json:"id"`
		From        string  `json:"from"`
		FromKind    string  `json:"from_kind"`
		To          *string `json:"to"`
		MessageType string  `json:"message_type"`
		Subject     string  `json:"subject"`
		InReplyTo   *int64  `json:"in_reply_to"`
	} `json:"notes"`
	NextBeforeID *int64 `json:"next_before_id"`
}

func (m mailResult) subjects() []string {
	var out []string
	for _, n := range m.Notes {
		out = append(out, n.Subject)
	}
	return out
}

// TestSessionMailVisibility: who may read and post where, and which notes
// each invited agent reads.
func TestSessionMailVisibility(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W1")
	p1, p2 := e.project(ws, "P1"), e.project(ws, "P2")
	ws2, owner2 := e.workspace("W2")
	a := e.agent(ws, owner, store.AllScopes, p1)
	b := e.agent(ws, owner, store.AllScopes, p1, p2)
	c := e.agent(ws, owner, store.AllScopes, p1)
	d := e.agent(ws, owner, store.AllScopes)
	x := e.agent(ws2, owner2, store.AllScopes, e.project(ws2, "PX"))
	slugA, slugB := a.claim("alice"), b.claim("bob")
	c.claim("carol")
	x.claim("xavier")
	s := e.session(ws, p1, "team_session")
	a.invite(s, store.RoleContributor)
	b.invite(s, store.RoleRunner)
	d.invite(s, store.RoleContributor)

	var posted postResult
	a.ok("post_session_note", with(ref(s), "subject", "started", "body", "on it", "idempotency_key", "k1"), &posted)
	if posted.SenderSlug != slugA || posted.Duplicate || posted.ID == 0 {
		t.Fatalf("post: %+v", posted)
	}
	e.ownerNote(s, owner, nil, "note", "to everyone")
	e.ownerNote(s, owner, &slugA, "reply", "to alice")
	e.ownerNote(s, owner, &slugB, "reply", "to bob")
	e.ownerNote(s, owner, nil, "analysis", "owners only")

	var got mailResult
	a.ok("read_session_mail", ref(s), &got)
	if want := []string{"to alice", "to everyone", "started"}; !slices.Equal(got.subjects(), want) {
		t.Fatalf("alice reads %v, want %v", got.subjects(), want)
	}
	if got.Notes[2].FromKind != "outside assistant" || got.Notes[2].From != slugA || got.Notes[0].FromKind != "owner" || *got.Notes[0].To != slugA {
		t.Fatalf("labels: %s", mustJSON(got))
	}
	b.ok("read_session_mail", ref(s), &got)
	if want := []string{"to bob", "to everyone", "started"}; !slices.Equal(got.subjects(), want) {
		t.Fatalf("bob reads %v, want %v", got.subjects(), want)
	}

	refusals := []struct {
		who  *agent
		tool string
		args map[string]any
		want string
	}{
		{c, "read_session_mail", ref(s), "not invited to this session"},
		{c, "post_session_note", with(ref(s), "subject", "s", "body", "b", "idempotency_key", "k"), "not invited to this session"},
		{c, "read_session_state", ref(s), "not invited to this session"},
		{c, "poll_resource_events", map[string]any{"resource_type": s.Type, "resource_id": s.PublicID, "after_sequence": 0}, "not invited to this session"},
		{x, "read_session_mail", ref(s), "session not found"},
		{x, "post_session_note", with(ref(s), "subject", "s", "body", "b", "idempotency_key", "k"), "session not found"},
		{a, "read_session_mail", map[string]any{"session_type": "loop_session", "session_id": s.PublicID}, "session not found"},
		{d, "post_session_note", with(ref(s), "subject", "s", "body", "b", "idempotency_key", "k"), "Claim a profile first"},
	}
	for _, r := range refusals {
		if msg := r.who.refused(r.tool, r.args); len(msg) < len(r.want) || msg[:len(r.want)] != r.want {
			t.Errorf("%s: %q, want it to start with %q", r.tool, msg, r.want)
		}
	}

	// list_sessions and read_session_state for an invited agent.
	var sessions struct {
		Sessions []map[string]string `json:"sessions"`
	}
	b.ok("list_sessions", map[string]any{}, &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0]["session_id"] != s.PublicID || sessions.Sessions[0]["role"] != "runner" || sessions.Sessions[0]["project"] != "P1" {
		t.Fatalf("list_sessions: %s", mustJSON(sessions))
	}
	c.ok("list_sessions", map[string]any{}, &sessions)
	if len(sessions.Sessions) != 0 {
		t.Fatalf("carol's sessions: %s", mustJSON(sessions))
	}
	var state struct {
		Title        string           `json:"title"`
		Role         string           `json:"role"`
		LastSequence int64            `json:"last_sequence"`
		Participants []map[string]any `json:"participants"`
	}
	a.ok("read_session_state", ref(s), &state)
	// Events so far: three invitations and alice's note (owner notes were
	// written directly, without events).
	if state.Role != "contributor" || state.LastSequence != 4 || len(state.Participants) != 3 {
		t.Fatalf("read_session_state: %s", mustJSON(state))
	}
	if state.Participants[0]["handle"] != "alice" || state.Participants[0]["sender_slug"] != slugA || state.Participants[2]["handle"] != nil {
		t.Fatalf("participants: %s", mustJSON(state.Participants))
	}
}

// TestPollResourceEvents reads the event sequence forward in pages.
func TestPollResourceEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm := e.team("loop_session", store.RoleRunner, "alice")
	a, s := tm.agents[0], tm.s
	for i := range 4 {
		a.ok("post_session_note", with(ref(s), "subject", fmt.Sprint("n", i), "body", "b", "idempotency_key", fmt.Sprint("k", i)), nil)
	}
	type events struct {
		Events []struct {
			Sequence int64  `json:"sequence"`
			Kind     string `json:"kind"`
			NoteID   *int64 `json:"note_id"`
		} `json:"events"`
		NextSequence int64 `json:"next_sequence"`
	}
	poll := func(after int64, limit int) events {
		var ev events
		args := map[string]any{"resource_type": s.Type, "resource_id": s.PublicID, "after_sequence": after}
		if limit > 0 {
			args["limit"] = limit
		}
		a.ok("poll_resource_events", args, &ev)
		return ev
	}
	var seen []int64
	after := int64(0)
	for calls := 1; ; calls++ {
		ev := poll(after, 2)
		if len(ev.Events) == 0 {
			if ev.NextSequence != after || calls != 4 {
				t.Fatalf("empty page: next %d after %d, call %d", ev.NextSequence, after, calls)
			}
			break
		}
		for _, x := range ev.Events {
			seen = append(seen, x.Sequence)
		}
		after = ev.NextSequence
	}
	if !slices.Equal(seen, []int64{1, 2, 3, 4, 5}) {
		t.Fatalf("sequences %v", seen)
	}
	all := poll(0, 0)
	if len(all.Events) != 5 || all.Events[0].Kind != "participant_invited" || all.Events[1].Kind != "note_posted" || all.Events[1].NoteID == nil || all.NextSequence != 5 {
		t.Fatalf("default page: %s", mustJSON(all))
	}
}

// TestReadSessionMailPaging: with 0, 3, 12 and 30 new replies on top of a
// note the client has seen, a client that reads from the top with limit
// 5, 10 or 20 and stops at the page holding the known id needs exactly
// new/limit + 1 calls and reads limit rows per call.
func TestReadSessionMailPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	p := e.project(ws, "P")
	a := e.agent(ws, owner, store.AllScopes, p)
	slug := a.claim("alice")
	for _, fresh := range []int{0, 3, 12, 30} {
		for _, limit := range []int{5, 10, 20} {
			t.Run(fmt.Sprintf("%d new, limit %d", fresh, limit), func(t *testing.T) {
				s := e.session(ws, p, "agent_session")
				a.invite(s, store.RoleContributor)
				// 20 notes the client has read; the newest is the known id.
				var known int64
				for i := range 20 {
					known = e.ownerNote(s, owner, &slug, "reply", fmt.Sprint("old ", i))
				}
				e.ownerNote(s, owner, new("ext-someone-else"), "reply", "not for alice")
				e.ownerNote(s, owner, nil, "analysis", "owners only")
				var newIDs []int64
				for i := range fresh {
					newIDs = append(newIDs, e.ownerNote(s, owner, &slug, "reply", fmt.Sprint("new ", i)))
				}
				slices.Reverse(newIDs) // newest first, as the tool returns them

				calls, rows := 0, 0
				var got []int64
				args := with(ref(s), "limit", limit)
				for {
					var page mailResult
					a.ok("read_session_mail", args, &page)
					calls++
					rows += len(page.Notes)
					done := false
					for _, n := range page.Notes {
						if len(got) > 0 && n.ID >= got[len(got)-1] {
							t.Fatalf("not newest first: %d after %d", n.ID, got[len(got)-1])
						}
						got = append(got, n.ID)
						done = done || n.ID == known
					}
					if done || page.NextBeforeID == nil {
						break
					}
					if calls > 10 {
						t.Fatal("too many calls")
					}
					args = with(ref(s), "limit", limit, "before_id", *page.NextBeforeID)
				}
				wantCalls := fresh/limit + 1
				if calls != wantCalls || rows != wantCalls*limit {
					t.Fatalf("%d calls and %d rows, want %d and %d", calls, rows, wantCalls, wantCalls*limit)
				}
				if !slices.Equal(got[:fresh], newIDs) || got[fresh] != known {
					t.Fatalf("read %v, want the %d new ids %v then %d", got, fresh, newIDs, known)
				}
			})
		}
	}
	// The default page is 10.
	s := e.session(ws, p, "agent_session")
	a.invite(s, store.RoleContributor)
	for i := range 12 {
		e.ownerNote(s, owner, nil, "note", fmt.Sprint(i))
	}
	var page mailResult
	a.ok("read_session_mail", ref(s), &page)
	if len(page.Notes) != 10 || page.NextBeforeID == nil || *page.NextBeforeID != page.Notes[9].ID {
		t.Fatalf("default page: %d notes, next %v", len(page.Notes), page.NextBeforeID)
	}
	var last mailResult
	a.ok("read_session_mail", with(ref(s), "before_id", *page.NextBeforeID), &last)
	if len(last.Notes) != 2 || last.NextBeforeID != nil {
		t.Fatalf("last page: %d notes, next %v", len(last.Notes), last.NextBeforeID)
	}
}

// TestReadSessionMailSaysWhatIsForYou: each note of a page addressed to the
// reader, the notes its unread hint counts (replies to its slug from an
// owner or an agent, owners' notes to the whole session), carries
// "for_you": true; its own notes and other agents' notes to the whole
// session leave it out.
func TestReadSessionMailSaysWhatIsForYou(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	p := e.project(ws, "P")
	a, b := e.agent(ws, owner, store.AllScopes, p), e.agent(ws, owner, store.AllScopes, p)
	slugA, slugB := a.claim("alice"), b.claim("bob")
	s := e.session(ws, p, "team_session")
	a.invite(s, store.RoleContributor)
	b.invite(s, store.RoleContributor)

	note := func(subject string) map[string]any {
		return with(ref(s), "subject", subject, "body", "b", "idempotency_key", subject)
	}
	a.ok("post_session_note", note("alice to all"), nil)
	a.ok("reply_to_sender", with(note("alice to bob"), "to", slugB), nil)
	b.ok("post_session_note", note("bob to all"), nil)
	b.ok("reply_to_sender", with(note("bob to alice"), "to", slugA), nil)
	e.ownerNote(s, owner, nil, "note", "owner to all")
	e.ownerNote(s, owner, &slugA, "reply", "owner to alice")
	e.ownerNote(s, owner, &slugB, "reply", "owner to bob")

	var got struct {
		Notes []struct {
			Subject string `json:"subject"`
			ForYou  *bool  `json:"for_you"`
		} `json:"notes"`
	}
	a.ok("read_session_mail", with(ref(s), "limit", 20), &got)
	want := map[string]bool{"alice to all": false, "alice to bob": false, "bob to all": false,
		"bob to alice": true, "owner to all": true, "owner to alice": true}
	if len(got.Notes) != len(want) {
		t.Fatalf("alice reads %s", mustJSON(got))
	}
	for _, n := range got.Notes {
		if forYou := n.ForYou != nil; forYou != want[n.Subject] || (forYou && !*n.ForYou) {
			t.Errorf("%q: for_you %v, want %v", n.Subject, mustJSON(n.ForYou), want[n.Subject])
		}
	}
}
