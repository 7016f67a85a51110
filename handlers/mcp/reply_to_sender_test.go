package mcp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// rawResult is a tools/call result as it travels.
type rawResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

// callAt posts one tools/call to the MCP endpoint at url with token and
// returns its result; safe from any goroutine (it reports, never fails the
// test).
func callAt(url, token, tool string, args any) (*rawResult, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(toolCall(1, tool, args)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result *rawResult      `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &msg); err != nil || msg.Result == nil {
		return nil, fmt.Errorf("%s: status %d: %s", tool, resp.StatusCode, b)
	}
	return msg.Result, nil
}

// callInto is callAt that counts an isError result as an error too and
// decodes the structured result into out.
func callInto(url, token, tool string, args, out any) error {
	res, err := callAt(url, token, tool, args)
	if err == nil && res.IsError {
		err = fmt.Errorf("isError: %s", res.Content[0].Text)
	}
	if err == nil {
		err = json.Unmarshal(res.StructuredContent, out)
	}
	return err
}

// TestReplyToSender: an agent replies to another agent's slug and to an
// owner's; only the recipient (and the owners) read the reply, as a reply
// to that slug, and the recipient's next call carries the unread hint.
func TestReplyToSender(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm := e.team("team_session", store.RoleContributor, "alice", "bob", "carol")
	ws, owner, s := tm.ws, tm.owner, tm.s
	a, b, c := tm.agents[0], tm.agents[1], tm.agents[2]
	slugA, slugB := tm.slugs[0], tm.slugs[1]
	var q postResult
	b.ok("post_session_note", with(ref(s), "subject", "Which API?", "body", "v1 or v2?", "idempotency_key", "q1"), &q)

	// Agent to agent.
	var r postResult
	a.ok("reply_to_sender", with(ref(s), "to", slugB, "subject", "Re: Which API?", "body", "v2.", "idempotency_key", "r1", "in_reply_to", q.ID), &r)
	if r.Duplicate || r.SenderSlug != slugA || r.ID <= q.ID {
		t.Fatalf("reply: %+v", r)
	}
	got := b.call("set_status", map[string]any{"task": "waiting"})
	if u := unreadOf(t, got); u == nil || u.Total != 1 || u.Sessions[0].SessionID != s.PublicID || u.Sessions[0].Count != 1 {
		t.Fatalf("bob's next call: unread %+v", u)
	}
	var mail mailResult
	b.ok("read_session_mail", ref(s), &mail)
	if len(mail.Notes) != 2 || mail.Notes[0].ID != r.ID || mail.Notes[0].MessageType != "reply" || *mail.Notes[0].To != slugB ||
		mail.Notes[0].From != slugA || mail.Notes[0].FromKind != "outside assistant" ||
		mail.Notes[0].InReplyTo == nil || *mail.Notes[0].InReplyTo != q.ID || mail.Notes[1].InReplyTo != nil {
		t.Fatalf("bob reads %s", mustJSON(mail))
	}
	c.ok("read_session_mail", ref(s), &mail)
	if len(mail.Notes) != 1 || mail.Notes[0].ID != q.ID {
		t.Fatalf("carol reads %v; a reply to bob is not hers", mail.subjects())
	}
	a.ok("read_session_mail", ref(s), &mail)
	if len(mail.Notes) != 2 || mail.Notes[0].ID != r.ID {
		t.Fatalf("alice reads %v; her own reply is hers", mail.subjects())
	}

	// Agent to owner: the owners see it addressed to the owner's slug.
	ownerSlug := store.OwnerSlug(owner)
	var toOwner postResult
	b.ok("reply_to_sender", with(ref(s), "to", ownerSlug, "subject", "Blocked", "body", "Need a key.", "idempotency_key", "r2"), &toOwner)
	rows, err := e.st.ListSessionMail(e.ctx, ws, s.ID, 0, 10)
	if err != nil || rows[0].ID != toOwner.ID || rows[0].MessageType != store.MessageReply || *rows[0].RecipientSlug != ownerSlug ||
		rows[0].SenderSlug != slugB {
		t.Fatalf("owner's view: %+v %v", rows[0], err)
	}
	// Posting starts nothing but the note: its event, one per note.
	var events int
	if err := e.sql().QueryRow(`SELECT count(*) FROM resource_events WHERE session_id = $1 AND kind = 'note_posted'`, s.ID).Scan(&events); err != nil || events != 3 {
		t.Fatalf("note_posted events %d %v, want 3", events, err)
	}
}

// TestReplyToSenderRefusals: every refusal names what the agent can do, and
// writes nothing.
func TestReplyToSenderRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	ws2, owner2 := e.workspace("W2")
	p := e.project(ws, "P")
	a := e.agent(ws, owner, store.AllScopes, p)
	b := e.agent(ws, owner, store.AllScopes, p)
	uninvited := e.agent(ws, owner, store.AllScopes, p)
	revoked := e.agent(ws, owner, store.AllScopes, p)
	stranger := e.agent(ws, owner, store.AllScopes, p)
	noProfile := e.agent(ws, owner, store.AllScopes, p)
	newcomer := e.agent(ws, owner, store.AllScopes, p) // neither claimed nor invited
	other := e.agent(ws2, owner2, store.AllScopes, e.project(ws2, "Q"))
	slugA, slugB := a.claim("alice"), b.claim("bob")
	slugU, slugR := uninvited.claim("ursula"), revoked.claim("rex")
	stranger.claim("stan")
	slugO := other.claim("otto")
	s := e.session(ws, p, "team_session")
	for _, ag := range []*agent{a, b, revoked, noProfile} {
		ag.invite(s, store.RoleContributor)
	}
	if err := e.st.RevokeConnection(e.ctx, ws, revoked.conn.ID); err != nil {
		t.Fatal(err)
	}
	reply := func(to, key string) map[string]any {
		return with(ref(s), "to", to, "subject", "Re", "body", "answer", "idempotency_key", key)
	}
	const noSuch = "to: no such sender in this session"
	for _, c := range []struct {
		name string
		who  *agent
		args map[string]any
		want string
	}{
		{"unknown slug", a, reply("ext-nobody", "k1"), noSuch},
		{"uninvited agent's slug", a, reply(slugU, "k2"), noSuch},
		{"revoked agent's slug", a, reply(slugR, "k3"), noSuch},
		{"another workspace's agent", a, reply(slugO, "k4"), noSuch},
		{"another workspace's owner", a, reply(store.OwnerSlug(owner2), "k5"), noSuch},
		{"not an owner slug", a, reply("owner-0"+fmt.Sprint(owner), "k6"), noSuch},
		{"own slug", a, reply(slugA, "k7"), "to: that is your own sender slug"},
		{"not invited yourself", stranger, reply(slugB, "k8"), "not invited to this session"},
		{"no profile", noProfile, reply(slugB, "k9"), "Claim a profile first"},
		{"no profile and not invited: claiming comes first", newcomer, reply(slugB, "k13"), "Claim a profile first"},
		{"blank subject and body", a, with(reply(slugB, "k14"), "subject", " ", "body", "\n\t"), "body: write a message: the subject and the body are both blank"},
		{"no such session", a, with(reply(slugB, "k10"), "session_id", "nope"), "session not found"},
		{"empty key", a, reply(slugB, ""), "idempotency_key: use 1 to 200 characters"},
		{"answers no note", a, with(reply(slugB, "k12"), "in_reply_to", 999999), "in_reply_to: not a note of this session you can read"},
		{"answers note 0", a, with(reply(slugB, "k13"), "in_reply_to", 0), "Invalid arguments"},
		{"no to", a, map[string]any{"session_type": s.Type, "session_id": s.PublicID, "subject": "s", "body": "b", "idempotency_key": "k11"},
			`Invalid arguments: missing required properties ["to"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if msg := c.who.refused("reply_to_sender", c.args); !strings.HasPrefix(msg, c.want) {
				t.Fatalf("%q, want %q", msg, c.want)
			}
		})
	}
	t.Run("post_session_note: blank, and claiming first", func(t *testing.T) {
		note := with(ref(s), "subject", "", "body", "  ", "idempotency_key", "p1")
		if msg := a.refused("post_session_note", note); !strings.HasPrefix(msg, "body: write a message") {
			t.Fatalf("blank note: %q", msg)
		}
		if msg := newcomer.refused("post_session_note", with(note, "subject", "Hi")); !strings.HasPrefix(msg, "Claim a profile first") {
			t.Fatalf("newcomer: %q", msg)
		}
	})
	var n int
	if err := e.sql().QueryRow(`SELECT count(*) FROM notes`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d notes written by refused calls", n)
	}
	// A read-only connection is refused before the tool runs.
	ro := e.agent(ws, owner, []string{store.ScopeRead}, p)
	ro.invite(s, store.RoleContributor)
	resp, body := e.rpc(ro.token, toolCall(1, "reply_to_sender", reply(slugB, "k14")))
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="osfoundry:write"`) {
		t.Fatalf("read-only: %d %s", resp.StatusCode, body)
	}
}

// TestReplyToSenderIdempotency: the same key and content return the first
// reply; the same key with another recipient, subject or body, or used by
// post_session_note, is refused and writes nothing; racing retries on two
// replicas leave one row.
func TestReplyToSenderIdempotency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm := e.team("team_session", store.RoleContributor, "alice", "bob")
	a, s, slugB := tm.agents[0], tm.s, tm.slugs[1]

	reply := with(ref(s), "to", slugB, "subject", "Re: plan", "body", "Go ahead.", "idempotency_key", "rk-1")
	var first, again postResult
	a.ok("reply_to_sender", reply, &first)
	a.ok("reply_to_sender", reply, &again)
	if first.Duplicate || !again.Duplicate || again.ID != first.ID {
		t.Fatalf("first %+v, retry %+v", first, again)
	}
	for name, changed := range map[string]struct {
		tool string
		args map[string]any
	}{
		"recipient":         {"reply_to_sender", with(reply, "to", store.OwnerSlug(tm.owner))},
		"subject":           {"reply_to_sender", with(reply, "subject", "other")},
		"body":              {"reply_to_sender", with(reply, "body", "other")},
		"post_session_note": {"post_session_note", with(ref(s), "subject", "Re: plan", "body", "Go ahead.", "idempotency_key", "rk-1")},
	} {
		if msg := a.refused(changed.tool, changed.args); !strings.HasPrefix(msg, "idempotency_key: already used for a different note") {
			t.Errorf("another %s: %q", name, msg)
		}
	}
	// And the other way round: a post_session_note key is not a reply's.
	var posted postResult
	a.ok("post_session_note", with(ref(s), "subject", "s", "body", "b", "idempotency_key", "pk-1"), &posted)
	if msg := a.refused("reply_to_sender", with(reply, "subject", "s", "body", "b", "idempotency_key", "pk-1")); !strings.HasPrefix(msg, "idempotency_key: already used") {
		t.Errorf("reply with a note's key: %q", msg)
	}
	if n := countNotes(e, a.conn.ID); n != 2 {
		t.Fatalf("%d notes, want 2", n)
	}

	// Racing retries of one reply, through two replicas.
	urls := []string{e.mcpURL(), e.replica(t).URL + "/mcp"}
	race := with(reply, "idempotency_key", "rk-race", "body", "raced")
	const tries = 12
	results := make([]postResult, tries)
	errs := concurrently(tries, func(i int) error {
		return callInto(urls[i%2], a.token, "reply_to_sender", race, &results[i])
	})
	fresh := 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("try %d: %v", i, errs[i])
		}
		if r.ID != results[0].ID {
			t.Fatalf("try %d got note %d, try 0 note %d", i, r.ID, results[0].ID)
		}
		if !r.Duplicate {
			fresh++
		}
	}
	var rows int
	if err := e.sql().QueryRow(`SELECT count(*) FROM notes WHERE idempotency_key = 'rk-race'`).Scan(&rows); err != nil || rows != 1 || fresh != 1 {
		t.Fatalf("%d rows, %d answers without duplicate; want 1 and 1", rows, fresh)
	}
}
