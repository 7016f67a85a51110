package store_test

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestParseSearch(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]store.Search{
		"orders_total":                               {Text: "orders_total"},
		`refund "orders total" -draft`:               {Text: `refund "orders total" -draft`},
		"from:@ada-claude project:Shop type:reply x": {Text: "x", From: "ada-claude", Project: "Shop", Type: "reply"},
		`in:"Release week" project:"Shop web"`:       {In: "Release week", Project: "Shop web"},
		"TYPE:Analysis http://example.com":           {Text: "http://example.com", Type: "analysis"},
		"from: alone":                                {Text: "from: alone"},
		"  ":                                         {},
	} {
		if got := store.ParseSearch(q); got != want {
			t.Errorf("ParseSearch(%q) = %+v, want %+v", q, got, want)
		}
	}
}

// TestSearchNotes: words of a subject, a body or a sender find a note of
// the owner's workspace (analysis included), every filter narrows, pages go
// back, and hits come marked; nothing of another workspace is ever found.
func TestSearchNotes(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	post := func(conn int64, s *store.Session, to, subject, body, key string) int64 {
		t.Helper()
		n, _, err := w.st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: w.ws, ConnectionID: conn, SessionType: s.Type,
			SessionID: s.PublicID, To: to, Subject: subject, Body: body, IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return n.ID
	}
	totals := post(w.ada, w.s1, "", "Rounding", "The orders_total column rounds\x01 wrong.", "a")
	release := post(w.bea, w.s2, "", "Release v2.3.1 tagged", "Notes are in CHANGELOG.md", "b")
	reply := post(w.ada, w.s2, store.OwnerSlug(w.olive), "Re: refunds", "Refunds follow the orders total.", "c")
	analysis, _, err := w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: w.ws, SessionID: w.s1.ID, OwnerID: w.olive,
		Type: store.MessageAnalysis, Subject: "Why rounding", Body: "Banker's rounding in orders_total."})
	if err != nil {
		t.Fatal(err)
	}
	ws2, owner2 := storetest.SQL(t, w.st).InsertWorkspace("Other")
	p2, _ := w.st.CreateProject(ctx, ws2, "P")
	s3, _ := w.st.CreateSession(ctx, store.NewSession{WorkspaceID: ws2, ProjectID: p2.ID, Type: "team_session", Title: "S1"})
	if _, _, err := w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws2, SessionID: s3.ID, OwnerID: owner2,
		Type: store.MessageNote, Subject: "orders_total elsewhere", Body: "orders_total"}); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		q    string
		want []int64
	}{
		{"orders_total", []int64{analysis.ID, reply, totals}}, // the simple parser reads it as the phrase "orders total"
		{"v2.3.1", []int64{release}},
		{"changelog.md", []int64{release}},
		{`"orders total"`, []int64{analysis.ID, reply, totals}},
		{"rounding -banker", []int64{totals}},
		{"ada", []int64{reply, totals}},        // the handle in the sender's slug
		{"from:ada", []int64{reply, totals}},   // a handle
		{"from:@bea", []int64{release}},        // a handle with @
		{"from:" + w.slugB, []int64{release}},  // a slug
		{`from:"Olive"`, []int64{analysis.ID}}, // a display name
		{"from:me rounding", []int64{analysis.ID}},
		{"project:Q", []int64{reply, release}},
		{"project:q orders", []int64{reply}},
		{"type:analysis", []int64{analysis.ID}},
		{"type:reply", []int64{reply}},
		{"in:S1", []int64{analysis.ID, totals}},
		{"in:" + w.s2.PublicID + " refunds", []int64{reply}},
		{"nothingmatches", nil},
		{"project:Nope", nil},
	} {
		t.Run(c.q, func(t *testing.T) {
			got, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch(c.q), 0, 20)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]int64, len(got))
			for i, r := range got {
				ids[i] = r.ID
			}
			if !slices.Equal(ids, c.want) {
				t.Fatalf("found %v, want %v", ids, c.want)
			}
		})
	}

	// Hits are marked, and a marker in the text itself is gone.
	got, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch("orders_total"), 0, 20)
	if err != nil || len(got) != 3 {
		t.Fatal(got, err)
	}
	hit := got[2]
	if hit.ProjectName != "P" || hit.SessionTitle != "S1" {
		t.Fatalf("where %+v", hit)
	}
	if want := "The " + store.HighlightStart + "orders" + store.HighlightStop + "_" + store.HighlightStart + "total" + store.HighlightStop + " column rounds wrong."; hit.Snippet != want {
		t.Fatalf("snippet %q, want %q", hit.Snippet, want)
	}
	if strings.Contains(got[0].Subject, store.HighlightStart) {
		t.Fatalf("subject %q marks what does not match", got[0].Subject)
	}
	r, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch("rounding"), 0, 20)
	if want := "Why " + store.HighlightStart + "rounding" + store.HighlightStop; err != nil || len(r) != 2 || r[0].Subject != want {
		t.Fatalf("subject %+v, want %q (%v)", r, want, err)
	}

	// Paging.
	page, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch(`"orders total"`), 0, 1)
	if err != nil || len(page) != 2 || page[0].ID != analysis.ID {
		t.Fatalf("first page %v %v", page, err)
	}
	page, _, err = w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch(`"orders total"`), page[0].ID, 1)
	if err != nil || len(page) != 2 || page[0].ID != reply {
		t.Fatalf("second page %v %v", page, err)
	}

	// The other workspace finds only its own.
	other, _, err := w.st.SearchNotes(ctx, ws2, owner2, store.ParseSearch("orders_total"), 0, 20)
	if err != nil || len(other) != 1 || other[0].WorkspaceID != ws2 {
		t.Fatalf("other workspace: %+v %v", other, err)
	}
	// An owner naming another workspace's project or session finds nothing.
	for _, q := range []string{"project:" + itoa(p2.ID), "in:" + s3.PublicID} {
		if got, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch(q), 0, 20); err != nil || len(got) != 0 {
			t.Fatalf("%s: %v %v", q, got, err)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestSearchBeyondTheWindow: notes older than the newest ones a search
// walks first are found (through the index or by walking on), in order
// with the newer hits, and paging goes on from them.
func TestSearchBeyondTheWindow(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	db := storetest.SQL(t, w.st)
	fill := func(n int, body string) {
		t.Helper()
		db.Exec(`
			INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name, message_type, subject, body)
			SELECT $1, $2, 'agent', $3::bigint, $4, 'Ada', 'note', 's', $5 FROM generate_series(1, $6::int)`,
			w.ws, w.s1.ID, w.ada, w.slugA, body, n)
	}
	// A word found rarely in the newest notes is read from the index for the
	// older ones; one found a few times there, by walking on.
	fill(3, "needle in old hay")
	fill(30, "old straw")
	fill(store.SearchWindow+10, "filler")
	fill(2, "fresh hay")
	fill(6, "fresh straw")
	for q, want := range map[string]int{"needle": 3, "hay": 5, "filler": 21, "straw": 21} {
		got, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch(q), 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want {
			t.Fatalf("%s: %d results, want %d", q, len(got), want)
		}
		for i := 1; i < len(got); i++ {
			if got[i].ID >= got[i-1].ID {
				t.Fatalf("%s: not newest first at %d", q, i)
			}
		}
	}
	first, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch("hay"), 0, 3)
	if err != nil || len(first) != 4 || first[0].Snippet != "fresh "+store.HighlightStart+"hay"+store.HighlightStop {
		t.Fatalf("first page %+v %v", first, err)
	}
	rest, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch("hay"), first[2].ID, 3)
	if err != nil || len(rest) != 2 || rest[0].ID != first[3].ID {
		t.Fatalf("next page %+v %v", rest, err)
	}
}

// TestSearchReadsItsWorkspace: another workspace's 20,000 newer notes are
// not walked through: a search reads its own workspace's notes newest
// first (notes_workspace_idx), also in a generic plan.
func TestSearchReadsItsWorkspace(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	db := storetest.SQL(t, w.st)
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name, message_type, subject, body)
		SELECT $1, $2, 'agent', $3::bigint, $4, 'Ada', 'note', 's', 'needle in hay' FROM generate_series(1, 30)`, w.ws, w.s1.ID, w.ada, w.slugA)
	other, otherOwner := db.InsertWorkspace("other")
	p, err := w.st.CreateProject(ctx, other, "P")
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.st.CreateSession(ctx, store.NewSession{WorkspaceID: other, ProjectID: p.ID, Type: "team_session", Title: "Busy"})
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, message_type, subject, body)
		SELECT $1, $2, 'owner', $3::bigint, owner_slug($3::bigint), 'O', 'note', 's', 'straw' FROM generate_series(1, 20000)`, other, s.ID, otherOwner)
	db.Exec(`VACUUM ANALYZE notes`)
	tx := db.Begin()
	defer tx.Rollback(ctx)
	plan := genericPlan(t, tx, store.SearchWordsSQL, w.ws, "needle", "", "", store.OwnerSlug(w.olive), "", "", int64(math.MaxInt64), 21)
	if n := rowsRead(plan); n > 1000 {
		t.Fatalf("read %d rows of notes:\n%s", n, plan)
	}
}

// A search whose words fill a page among the workspace's newest notes reads
// the window's ids and walks its notes down to the page, in the generic plan
// too, rather than reading and sorting every note of the workspace or
// building a bitmap of every note of it that holds the words.
func TestSearchWalksItsWindow(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	db := storetest.SQL(t, w.st)
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name, message_type, subject, body)
		SELECT $1, $2, 'agent', $3::bigint, $4, 'Ada', 'note', 's', CASE WHEN i % 100 = 0 THEN 'needle in hay' ELSE 'hay' END
		FROM generate_series(1, 30000) i`, w.ws, w.s1.ID, w.ada, w.slugA)
	other, otherOwner := db.InsertWorkspace("other")
	p, err := w.st.CreateProject(ctx, other, "P")
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.st.CreateSession(ctx, store.NewSession{WorkspaceID: other, ProjectID: p.ID, Type: "team_session", Title: "Busy"})
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, message_type, subject, body)
		SELECT $1, $2, 'owner', $3::bigint, owner_slug($3::bigint), 'O', 'note', 's', 'straw' FROM generate_series(1, 20000)`, other, s.ID, otherOwner)
	db.Exec(`VACUUM ANALYZE notes`)
	tx := db.Begin()
	defer tx.Rollback(ctx)
	plan := genericPlan(t, tx, store.SearchWordsSQL, w.ws, "needle", "", "", store.OwnerSlug(w.olive), "", "", int64(math.MaxInt64), 21)
	// The window's 10,000 ids, read index-only, and the 2,100 notes down to
	// its 21st hit; none of the words' index.
	if n := rowsRead(plan); n > store.SearchWindow+2200 {
		t.Fatalf("read %d rows of notes for a page of 21 hits, one note in 100, of 30,000:\n%s", n, plan)
	}
	if n := indexEntriesRead(plan, "notes_search"); n > 0 {
		t.Fatalf("read %d entries of the words' index for a page the window holds:\n%s", n, plan)
	}
}

// TestSearchIndexReadsOnlyItsWorkspace: a search whose words are rare in
// the owner's newest notes reads the words' index for the older ones, and
// there only the owner's workspace: another workspace's 20,000 notes that
// hold the same word are never read (workspace_id and the words are one
// index, notes_search_workspace_idx), also in a generic plan. Its time is
// logged beside the same search with the other workspace's notes gone.
func TestSearchIndexReadsOnlyItsWorkspace(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	db := storetest.SQL(t, w.st)
	other, otherOwner := db.InsertWorkspace("other")
	p, err := w.st.CreateProject(ctx, other, "P")
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.st.CreateSession(ctx, store.NewSession{WorkspaceID: other, ProjectID: p.ID, Type: "team_session", Title: "Busy"})
	if err != nil {
		t.Fatal(err)
	}
	// The other workspace's needles are older than everything of the owner's.
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, message_type, subject, body)
		SELECT $1, $2, 'owner', $3::bigint, owner_slug($3::bigint), 'O', 'note', 's', 'needle' FROM generate_series(1, 20000)`, other, s.ID, otherOwner)
	fill := func(n int, body string) {
		db.Exec(`
			INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name, message_type, subject, body)
			SELECT $1, $2, 'agent', $3::bigint, $4, 'Ada', 'note', 's', $5 FROM generate_series(1, $6::int)`, w.ws, w.s1.ID, w.ada, w.slugA, body, n)
	}
	fill(2, "needle in old hay")
	fill(store.SearchWindow+100, "hay")
	db.Exec(`VACUUM ANALYZE notes`)
	tx := db.Begin()
	plan := genericPlan(t, tx, store.SearchWordsSQL, w.ws, "needle", "", "", store.OwnerSlug(w.olive), "", "", int64(math.MaxInt64), 21)
	tx.Rollback(ctx)
	// The window's ids, read index-only, its notes walked, and the owner's
	// two needles: of the words' index, only the entries of the owner's notes.
	if n := rowsRead(plan); n > 2*store.SearchWindow+500 {
		t.Fatalf("read %d rows of notes, the other workspace's among them:\n%s", n, plan)
	}
	if n := indexEntriesRead(plan, "notes_search"); n > 100 {
		t.Fatalf("read %d entries of the words' index for the owner's 2 needles, the other workspace's 20,000 among them:\n%s", n, plan)
	}
	median := func() time.Duration {
		var took []time.Duration
		for range 15 {
			start := time.Now()
			if got, _, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch("needle"), 0, 20); err != nil || len(got) != 2 {
				t.Fatalf("found %d needles, want the owner's 2 (%v)", len(got), err)
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return took[len(took)/2]
	}
	beside := median()
	db.Exec(`DELETE FROM notes WHERE workspace_id = $1`, other)
	db.Exec(`VACUUM ANALYZE notes`)
	t.Logf("median search beside 20,000 of another workspace's notes holding the word: %v; without them: %v", beside, median())
}

// indexNode is a node of EXPLAIN ANALYZE's text that reads an index
// whose name starts with a prefix, and how many entries it gave.
var indexNode = regexp.MustCompile(`Index Scan on (\w+) \(actual rows=(\d+) loops=(\d+)\)`)

// indexEntriesRead sums the entries the plan's scans of the indexes named
// prefix… gave.
func indexEntriesRead(plan, prefix string) int {
	total := 0
	for _, m := range indexNode.FindAllStringSubmatch(plan, -1) {
		if strings.HasPrefix(m[1], prefix) {
			rows, _ := strconv.Atoi(m[2])
			loops, _ := strconv.Atoi(m[3])
			total += rows * loops
		}
	}
	return total
}

// TestSearchOfWordsRareTogetherStops: words that meet a few times in the
// window but not for a page walk at most SearchWalk notes below it, then
// stop and say where (the page offers to search on from there), instead of
// reading the workspace; a search before that point finds the older hits.
func TestSearchOfWordsRareTogetherStops(t *testing.T) {
	t.Parallel()
	w := newInboxWorld(t)
	ctx := context.Background()
	db := storetest.SQL(t, w.st)
	fill := func(n int, body string) {
		db.Exec(`
			INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name, message_type, subject, body)
			SELECT $1, $2, 'agent', $3::bigint, $4, 'Ada', 'note', 's', $5 FROM generate_series(1, $6::int)`, w.ws, w.s1.ID, w.ada, w.slugA, body, n)
	}
	fill(3, "alpha and beta long ago")
	fill((store.SearchWalk+store.SearchWindow)/2, "alpha alone")
	fill((store.SearchWalk+store.SearchWindow)/2, "beta alone")
	fill(6, "alpha with beta lately")
	db.Exec(`VACUUM ANALYZE notes`)
	got, stopped, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch("alpha beta"), 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 || stopped == 0 {
		t.Fatalf("%d results, stopped before %d", len(got), stopped)
	}
	older, stoppedAgain, err := w.st.SearchNotes(ctx, w.ws, w.olive, store.ParseSearch("alpha beta"), stopped, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(older) != 3 || stoppedAgain != 0 {
		t.Fatalf("before %d: %d results, stopped before %d", stopped, len(older), stoppedAgain)
	}
	tx := db.Begin()
	defer tx.Rollback(ctx)
	plan := genericPlan(t, tx, store.SearchWordsSQL, w.ws, "alpha beta", "", "", store.OwnerSlug(w.olive), "", "", int64(math.MaxInt64), 21)
	// The window's and the walk's ids, read index-only, and their notes.
	if n := rowsRead(plan); n > 2*(store.SearchWindow+store.SearchWalk)+100 {
		t.Fatalf("read %d rows of notes:\n%s", n, plan)
	}
}
