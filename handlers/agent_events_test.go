package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestAgentEventsRelayNotesToTheirAgent: GET /agent/events takes the
// bearer token of /mcp; it carries the owners' notes and replies
// addressed to the connection as they are posted (never another agent's
// note to all), replays what a reconnect with Last-Event-ID missed, records
// deliveries through POST /agent/delivered once, and ends with a revoked
// event when the connection is revoked.
func TestAgentEventsRelayNotesToTheirAgent(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	other := f.invitedAgent("claude-2", "Other")
	anon := f.app.client()
	bearer := []string{"Authorization", "Bearer " + f.ag.token}

	if s, res := anon.tryEvents("/agent/events"); s != nil || res.StatusCode != http.StatusUnauthorized ||
		!strings.Contains(res.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("without a token: %v %v", res.StatusCode, res.Header)
	}
	if _, res := anon.tryEvents("/agent/events", "Authorization", "Bearer osf_at_nope"); res.StatusCode != http.StatusUnauthorized ||
		!strings.Contains(res.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("a bad token: %v %v", res.StatusCode, res.Header)
	}

	st := anon.openEvents("/agent/events", bearer...)
	awaitRelay(t, f, 1)
	ownerNote := func(subject string) {
		t.Helper()
		res := f.alice.post(f.url+"/mail", url.Values{"type": {"note"}, "subject": {subject}, "body": {subject + " body"}})
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("owner's note: %d", res.StatusCode)
		}
	}
	f.app.agentNote(other, f.session.ID, "To all", "not for claude-1")
	ownerNote("First")
	m := st.next("note", 10*time.Second)
	var n struct {
		ID          int64  `json:"id"`
		Subject     string `json:"subject"`
		SessionType string `json:"session_type"`
		SessionID   string `json:"session_id"`
		FromKind    string `json:"from_kind"`
		ForYou      bool   `json:"for_you"`
	}
	if err := json.Unmarshal([]byte(m.data), &n); err != nil || n.Subject != "First" || m.id != fmt.Sprint(n.ID) || !n.ForYou ||
		n.SessionID != f.session.PublicID || n.FromKind != "owner" {
		t.Fatalf("note event: %+v %s", m, m.data)
	}
	st.close()

	// A note while away comes on the reconnect; the first does not again.
	ownerNote("Second")
	again := anon.openEvents("/agent/events", append(bearer, "Last-Event-ID", m.id)...)
	m2 := again.next("note", 10*time.Second)
	if !strings.Contains(m2.data, `"subject":"Second"`) {
		t.Fatalf("replay after Last-Event-ID %s: %s", m.id, m2.data)
	}

	deliver := func(ids ...int64) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"note_ids": ids})
		req, _ := http.NewRequest(http.MethodPost, f.app.srv.URL+"/agent/delivered", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+f.ag.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := anon.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return fmt.Sprint(res.StatusCode, " ", strings.TrimSpace(string(b)))
	}
	page := f.alice.openEvents(f.url + "/stream")
	f.app.waitStreams(f.session.ID, 1)
	if got := deliver(n.ID); got != fmt.Sprintf(`200 {"delivered":[%d]}`, n.ID) {
		t.Fatalf("first delivery report: %s", got)
	}
	if got := deliver(n.ID); got != `200 {"delivered":[]}` {
		t.Fatalf("the same again: %s", got)
	}
	if got := deliver(); !strings.HasPrefix(got, "400 ") || !strings.Contains(got, "note_ids") {
		t.Fatalf("an empty report: %s", got)
	}
	if r := page.next("receipt", 10*time.Second); !strings.Contains(r.data, fmt.Sprintf(`id="receipts-%d"`, n.ID)) || !strings.Contains(r.data, "context") {
		t.Fatalf("the owner's live page: %+v", r)
	}
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	if line := doc.Find(fmt.Sprintf("#receipts-%d", n.ID)).Text(); !strings.Contains(strings.Join(strings.Fields(line), " "), "in @claude-1's context") {
		t.Fatalf("the owner's page: %q", line)
	}

	if err := f.app.store.RevokeConnection(context.Background(), f.ag.workspaceID, f.ag.connID); err != nil {
		t.Fatal(err)
	}
	if r := again.next("revoked", 10*time.Second); !strings.Contains(r.data, "osfoundry agent login") {
		t.Fatalf("revoked event: %+v", r)
	}
	again.ends(5 * time.Second)
}

// TestAgentEventsEndWhenTheTokenExpires: a stream ends with an expired
// event when its token does, so that the bridge comes back with a fresh one.
func TestAgentEventsEndWhenTheTokenExpires(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	tok, _, err := f.app.store.MintAccessToken(context.Background(), f.ag.connID, f.app.srv.URL+"/mcp", []string{"osfoundry:read"}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	st := f.app.client().openEvents("/agent/events", "Authorization", "Bearer "+tok)
	if r := st.next("expired", 10*time.Second); !strings.Contains(r.data, "fresh") {
		t.Fatalf("expired event: %+v", r)
	}
	st.ends(5 * time.Second)
}

// awaitRelay waits until the app's relay holds n streams.
func awaitRelay(t *testing.T, f *sessionFixture, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f.app.h.relay.Open() != n {
		if time.Now().After(deadline) {
			t.Fatalf("the relay holds %d streams, want %d", f.app.h.relay.Open(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
