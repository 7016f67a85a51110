package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestSearchFindsWordForms: a word finds its forms (the 'english'
// configuration) while orders_total and v2.3.1 stay whole (the 'simple'
// one), and a snippet is plain text: no Markdown syntax, the hits marked.
func TestSearchFindsWordForms(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	post := func(subject, body string) int64 {
		t.Helper()
		n, _, err := w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: w.ws, SessionID: w.s1.ID, OwnerID: w.olive,
			Type: store.MessageNote, Subject: subject, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return n.ID
	}
	round := post("Half even", "We round half to even.")
	rounded := post("Totals", "The totals were rounded twice.")
	whole := post("Release", "orders_total ships in v2.3.1")
	apart := post("Orders", "The orders and the grand total differ.")
	md := post("Plan", "## Plan\n\n- [x] reproduced **twice**\n- [ ] fix\n\n| order | expected |\n|--|--:|\n| 1041 | 10.13 |\n\n```go\nfunc Rounding() {}\n```\n\nSee [the ledger](https://example.com/l).")
	for _, c := range []struct {
		q    string
		want []int64
	}{
		{"rounding", []int64{md, rounded, round}},
		{"rounded", []int64{md, rounded, round}},
		{"orders_total", []int64{whole}},
		{"v2.3.1", []int64{whole}},
		{`"grand totals"`, []int64{apart}},
		{"ledger", []int64{md}},
	} {
		got, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch(c.q), 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, c.want) {
			t.Errorf("%s: found %v, want %v", c.q, ids, c.want)
		}
	}
	got, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch("reproduced"), 0, 20)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	snippet := strings.NewReplacer(store.HighlightStart, "[", store.HighlightStop, "]").Replace(got[0].Snippet)
	for _, syntax := range []string{"##", "- [", "**", "|", "--:", "```", "](http"} {
		if strings.Contains(strings.ReplaceAll(snippet, "[reproduced]", ""), syntax) {
			t.Errorf("the snippet %q holds Markdown syntax %q", snippet, syntax)
		}
	}
	if !strings.Contains(snippet, "[reproduced] twice") || !strings.Contains(snippet, "the ledger") {
		t.Errorf("snippet %q", snippet)
	}
}

// TestSearchFindsSessionTitles: a session's title is searched, its notes
// found by it, word forms included, above the newest window and below it.
func TestSearchFindsSessionTitles(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	titled, err := w.st.CreateSession(ctx, store.NewSession{WorkspaceID: w.ws, ProjectID: w.p.ID, Type: "team_session", Title: "Refund rounding report"})
	if err != nil {
		t.Fatal(err)
	}
	post := func(s *store.Session, body string) int64 {
		t.Helper()
		n, _, err := w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: w.ws, SessionID: s.ID, OwnerID: w.olive, Type: store.MessageNote, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return n.ID
	}
	old := post(titled, "started")
	// Enough notes elsewhere that the first note is below the newest window.
	storetest.SQL(t, w.st).Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, message_type, subject, body)
		SELECT $1, $2, 'owner', $3::bigint, owner_slug($3::bigint), 'Olive', 'note', 's', 'hay' FROM generate_series(1, 10001)`, w.ws, w.s1.ID, w.olive)
	recent := post(titled, "half even everywhere")
	post(w.s1, "nothing about it")
	for _, q := range []string{"refunds", "refund rounded"} {
		got, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch(q), 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, []int64{recent, old}) {
			t.Errorf("%s: found %v, want the titled session's [%d %d]", q, ids, recent, old)
		}
	}
}
