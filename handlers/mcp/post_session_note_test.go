package mcp_test

import (
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

type postResult struct {
	ID         int64  `json:"id"`
	SenderSlug string `json:"sender_slug"`
	Duplicate  bool   `json:"duplicate"`
}

func countNotes(e *env, connID int64) int {
	e.t.Helper()
	var n int
	if err := e.sql().QueryRow(`SELECT count(*) FROM notes WHERE sender_connection_id = $1`, connID).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestPostSessionNoteIdempotencyKey: a retry returns the first note with
// duplicate true; the same key with other content is refused and writes
// nothing; the note, its event and the notification commit together.
func TestPostSessionNoteIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	p := e.project(ws, "P")
	a := e.agent(ws, owner, store.AllScopes, p)
	slug := a.claim("alice")
	s := e.session(ws, p, "agent_session")
	s2 := e.session(ws, p, "team_session")
	a.invite(s, store.RoleContributor)
	a.invite(s2, store.RoleContributor)

	note := with(ref(s), "subject", "PR opened", "body", "https://example.com/pr/1", "idempotency_key", "pr-1")
	var first, again postResult
	a.ok("post_session_note", note, &first)
	a.ok("post_session_note", note, &again)
	if first.Duplicate || !again.Duplicate || again.ID != first.ID || again.SenderSlug != slug || first.SenderSlug != slug {
		t.Fatalf("first %+v, retry %+v", first, again)
	}
	for name, changed := range map[string]map[string]any{
		"body":    with(note, "body", "other"),
		"subject": with(note, "subject", "other"),
		"session": with(note, "session_type", s2.Type, "session_id", s2.PublicID),
	} {
		if msg := a.refused("post_session_note", changed); !strings.HasPrefix(msg, "idempotency_key: already used for a different note") {
			t.Errorf("different %s: %q", name, msg)
		}
	}
	if n := countNotes(e, a.conn.ID); n != 1 {
		t.Fatalf("%d notes, want 1", n)
	}
	var events int
	if err := e.sql().QueryRow(`SELECT count(*) FROM resource_events WHERE kind = 'note_posted' AND note_id = $1`, first.ID).Scan(&events); err != nil || events != 1 {
		t.Fatalf("note_posted events: %d %v", events, err)
	}
	if msg := a.refused("post_session_note", with(note, "idempotency_key", "")); !strings.HasPrefix(msg, "idempotency_key: use 1 to 200 characters") {
		t.Fatalf("empty key: %q", msg)
	}
}
