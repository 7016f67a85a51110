package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Full-text search over the notes of a workspace (analysis notes included:
// only owners search): the text is PostgreSQL's websearch_to_tsquery syntax
// with the 'simple' and 'english' configurations ("quoted phrases", or, -not) against the
// generated column notes.search (migrations/032), and filters narrow it.

// SearchPageSize is how many results a search page shows.
const SearchPageSize = 20

// MaxSearchLen bounds the text of a search, in characters.
const MaxSearchLen = 500

// Search is a parsed search: its words and its filters (empty: none).
type Search struct {
	// Text is what websearch_to_tsquery reads.
	Text string
	// Project is a project's name or id (project:).
	Project string
	// From is a sender: a slug, an agent's handle (with or without @), a
	// display name, or "me" (from:).
	From string
	// Type is a message type (type:).
	Type string
	// In is a session: its public id, its title or its id (in:).
	In string
}

// ParseSearch splits a search box's text into words and filters: project:,
// from:, type: and in:, each with a value that may be "quoted". An unknown
// key: stays a word. Only the last value of a repeated filter counts.
func ParseSearch(q string) Search {
	var s Search
	var words []string
	for _, tok := range searchTokens(q) {
		key, val, ok := strings.Cut(tok, ":")
		if ok && val != "" {
			v := strings.Trim(val, `"`)
			switch strings.ToLower(key) {
			case "project":
				s.Project = v
				continue
			case "from":
				s.From = strings.TrimPrefix(v, "@")
				continue
			case "type":
				s.Type = strings.ToLower(v)
				continue
			case "in":
				s.In = v
				continue
			}
		}
		words = append(words, tok)
	}
	s.Text = strings.Join(words, " ")
	return s
}

// searchTokens splits on spaces outside double quotes; quotes stay in the
// tokens (a "phrase" is one token; so is key:"two words").
func searchTokens(q string) []string {
	var out []string
	var b strings.Builder
	quoted := false
	for _, r := range q {
		switch {
		case r == '"':
			quoted = !quoted
			b.WriteRune(r)
		case unicode.IsSpace(r) && !quoted:
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
		default:
			b.WriteRune(r)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// Empty reports whether the search asks for nothing at all.
func (s Search) Empty() bool {
	return s == Search{}
}

// SearchResult is a note found, with where it is and its highlighted
// subject and snippet: ts_headline's text with each hit between
// HighlightStart and HighlightStop, which nothing in a note can hold (they
// are removed from the text first), for views to turn into marks after
// escaping.
type SearchResult struct {
	Note
	SessionTitle string
	ProjectID    int64
	ProjectName  string
	Subject      string
	Snippet      string
}

// The markers of a hit in SearchResult's Subject and Snippet.
const (
	HighlightStart = "\x01"
	HighlightStop  = "\x02"
)

// searchFilters are a Search's filters on notes n of sessions s in projects
// p: $1 the workspace, $3 project, $4 from, $5 the owner's slug (for
// from:me), $6 type, $7 in, $8 the page's upper bound. The workspace is the
// owner's: nothing else is ever searched.
const searchFilters = `n.workspace_id = $1 AND n.id < $8
	AND ($3 = '' OR lower(p.name) = lower($3) OR p.id::text = $3)
	AND ($4 = '' OR n.sender_slug = $4 OR lower(n.sender_name) = lower($4) OR (lower($4) = 'me' AND n.sender_slug = $5)
		OR EXISTS (SELECT 1 FROM agent_profiles ap WHERE ap.connection_id = n.sender_connection_id AND ap.handle = lower($4)))
	AND ($6 = '' OR n.message_type = $6)
	AND ($7 = '' OR s.public_id = $7 OR lower(s.title) = lower($7) OR s.id::text = $7)`

// searchQuery is $2's words as the two configurations read them, either
// matching: 'simple' keeps orders_total, v2.3.1 and handles whole, 'english'
// matches word forms (rounding finds round and rounded). notes.search holds
// both vectors (migrations/080). Snippets are highlighted with 'english' on
// the body's plain text (note_plain: no Markdown syntax).
const searchQuery = `(websearch_to_tsquery('simple', $2) || websearch_to_tsquery('english', $2))`

// searchFrom joins a note n with its session s and project p; searchAlong
// does the same one note at a time (a lateral lookup each, fenced by OFFSET
// 0 so that the planner keeps it so), which keeps the notes' order: a walk
// newest first stops at its page instead of joining every note it might
// read. searchCut removes the highlight markers from a text.
//
// searchFiltersSQL, for a search without words, lists what the filters keep.
const (
	searchFrom  = `FROM notes n JOIN sessions s ON s.id = n.session_id JOIN projects p ON p.id = s.project_id`
	searchAlong = `CROSS JOIN LATERAL (SELECT s.id, s.title, s.public_id, s.project_id FROM sessions s WHERE s.id = n.session_id OFFSET 0) s
		CROSS JOIN LATERAL (SELECT p.id, p.name FROM projects p WHERE p.id = s.project_id OFFSET 0) p`
	searchCut = `translate(%s, E'\x01\x02', '')`
)

// searchWindow is how many of the newest notes a search reads first;
// searchFewHits is how many hits in them make the words common enough to
// walk on for the rest of the page; searchWalk bounds that walk.
const (
	searchWindow  = 10000
	searchFewHits = 5
	searchWalk    = 50000
)

// searchWalked is how a walk tests the words: on each note it reads, down
// the workspace's ids (BETWEEN keeps notes_workspace_idx's order in the
// generic plan). The coalesce keeps the words off the GIN index: a bitmap
// of it holds every note of the workspace with the words (300,000 for a
// word in 3 notes of 10 at a million), which the generic plan, guessing a
// few hundred, built before reading a page of 21.
const searchWalked = `n.workspace_id BETWEEN $1 AND $1 AND coalesce(n.search @@ (SELECT sq.q FROM sq), false)`

// searchWordsSQL finds a page of notes by $2's words, newest first, $9 the
// page size, then highlights the page's hits. No single plan is right for
// every word: walking the notes newest first costs the notes read before a
// page of hits, reading the GIN index of the workspace and the words
// (notes_search_workspace_idx, which gives only the workspace's entries)
// costs the notes that hold the words, and PostgreSQL's estimate of how many that is is
// rough (it misjudges rare words most, and words that go together). So the
// statement measures instead: recent walks the workspace's newest
// searchWindow notes, which fills a page for a word in one note of 500. When
// it does not, what it found says how rare the words are: with
// searchFewHits or more, walk reads on (at most searchWalk notes, and a
// page of hits is expected within a few windows); with fewer, indexed reads
// the GIN index for the notes below the window, by the workspace's key
// (equality: a range of a btree_gin key reads every entry of the range) and
// planned apart (OFFSET 0), so that it reads the words' entries and then
// their sessions. A session whose title holds
// the words (titled) adds its newest notes (entitled). Each part is gated by a row
// it joins, so a part not needed is never started (a gate in a scan's own
// filter would still start parallel workers).
var (
	searchWordsSQL = `
		WITH sq AS MATERIALIZED (
			-- The words as a query, parsed once (not once a row read).
			SELECT ` + searchQuery + ` AS q
		), titled AS MATERIALIZED (
			-- The workspace's sessions whose titles hold the words: their
			-- notes are hits too (entitled reads them).
			SELECT coalesce(array_agg(s.id), '{}'::bigint[]) AS ids FROM sessions s
			WHERE s.workspace_id = $1 AND (to_tsvector('simple', s.title) || to_tsvector('english', s.title)) @@ (SELECT sq.q FROM sq)
		), bound AS MATERIALIZED (
			-- The oldest note of the window (0 when it holds every note):
			-- an index-only walk of the workspace's newest ids.
			SELECT CASE WHEN count(*) = ` + strconv.Itoa(searchWindow) + ` THEN min(w.id) ELSE 0 END AS low
			FROM (SELECT n.id FROM notes n WHERE n.workspace_id BETWEEN $1 AND $1 AND n.id < $8
				ORDER BY n.workspace_id, n.id DESC LIMIT ` + strconv.Itoa(searchWindow) + `) w
		), recent AS MATERIALIZED (
			SELECT n.id, s.title, s.project_id, p.name AS project_name
			FROM notes n ` + searchAlong + `
			WHERE n.id >= (SELECT b.low FROM bound b)
				AND ` + searchWalked + ` AND ` + searchFilters + `
			ORDER BY n.workspace_id, n.id DESC LIMIT $9
		), edge AS MATERIALIZED (
			-- The window's bound, and how many hits it held.
			SELECT b.low, (SELECT count(*) FROM recent) AS hits FROM bound b
		), far AS MATERIALIZED (
			-- How deep the walk goes: searchWalk notes below the window,
			-- read index-only (0: they are all the rest); no row when the
			-- walk is not needed.
			SELECT CASE WHEN count(*) = ` + strconv.Itoa(searchWalk) + ` THEN min(w.id) ELSE 0 END AS low
			FROM (SELECT e.low FROM edge e WHERE e.hits >= ` + strconv.Itoa(searchFewHits) + ` AND e.hits < $9) gate
			CROSS JOIN LATERAL (SELECT n.id FROM notes n WHERE n.workspace_id BETWEEN $1 AND $1 AND n.id < gate.low
				ORDER BY n.workspace_id, n.id DESC LIMIT ` + strconv.Itoa(searchWalk) + `) w
			GROUP BY gate.low
		), walk AS MATERIALIZED (
			SELECT n.id, s.title, s.project_id, p.name AS project_name
			FROM notes n ` + searchAlong + `
			WHERE n.id >= (SELECT f.low FROM far f) AND n.id < (SELECT e.low FROM edge e)
				AND ` + searchWalked + ` AND ` + searchFilters + `
			ORDER BY n.workspace_id, n.id DESC LIMIT $9
		), indexed AS MATERIALIZED (
			SELECT n.id, s.title, s.project_id, p.name AS project_name
			FROM (SELECT e.low FROM edge e WHERE e.hits < ` + strconv.Itoa(searchFewHits) + `) gate
			CROSS JOIN LATERAL (
				SELECT n.id, n.workspace_id, n.session_id, n.sender_slug, n.sender_name, n.sender_connection_id, n.message_type
				FROM notes n WHERE n.workspace_id = $1 AND n.id < gate.low AND n.search @@ (SELECT sq.q FROM sq) OFFSET 0
			) n JOIN sessions s ON s.id = n.session_id JOIN projects p ON p.id = s.project_id
			WHERE ` + searchFilters + `
		), entitled AS MATERIALIZED (
			-- The newest notes of each titled session (its index newest
			-- first); none is read when no title holds the words.
			SELECT n.id, s.title, s.project_id, p.name AS project_name
			FROM titled t CROSS JOIN LATERAL unnest(t.ids) AS ts(id)
			CROSS JOIN LATERAL (
				SELECT n.id, n.workspace_id, n.session_id, n.sender_slug, n.sender_name, n.sender_connection_id, n.message_type
				FROM notes n WHERE n.session_id = ts.id AND n.id < $8 ORDER BY n.id DESC LIMIT $9
			) n JOIN sessions s ON s.id = n.session_id JOIN projects p ON p.id = s.project_id
			WHERE ` + searchFilters + `
		)
		SELECT r.*, st.stopped FROM (SELECT coalesce((SELECT f.low FROM far f), 0) AS stopped) st
		LEFT JOIN LATERAL (
			SELECT ` + listedColumns + `, f.title, f.project_id, f.project_name,
				ts_headline('english', ` + fmt.Sprintf(searchCut, "n.subject") + `, q.q, 'StartSel=` + HighlightStart + `, StopSel=` + HighlightStop + `, HighlightAll=true'),
				ts_headline('english', note_plain(n.body), q.q, 'StartSel=` + HighlightStart + `, StopSel=` + HighlightStop + `, MaxWords=35, MinWords=15')
			FROM (
				SELECT * FROM (SELECT * FROM recent UNION ALL SELECT * FROM walk UNION ALL SELECT * FROM indexed UNION SELECT * FROM entitled) found
				ORDER BY id DESC LIMIT $9
			) f
			JOIN notes n ON n.id = f.id ` + listedJoin + `, sq q
		) r ON true
		ORDER BY 1 DESC NULLS LAST`
	searchFiltersSQL = `
		SELECT ` + listedColumns + `, f.title, f.project_id, f.project_name, n.subject, left(note_plain(n.body), 300), 0::bigint
		FROM (
			SELECT n.id, s.title, s.project_id, p.name AS project_name FROM notes n ` + searchAlong + `
			WHERE $2 = '' AND ` + searchFilters + `
			ORDER BY n.id DESC LIMIT $9
		) f
		JOIN notes n ON n.id = f.id ` + listedJoin + `
		ORDER BY n.id DESC`
)

// SearchNotes returns a page of the notes of the workspace that match q,
// newest first: at most limit+1, so that the caller can tell whether an
// older page exists; with beforeID > 0 only older notes. ownerID is the one
// searching (from:me). A search without words lists what the filters keep.
// When words rare together walked searchWalk notes below the window without
// filling the page, the search stops there: stoppedBefore is the oldest note
// it read (0 when it read all the older notes it had to), and a search
// before it goes on.
func (s *Store) SearchNotes(ctx context.Context, workspaceID, ownerID int64, q Search, beforeID int64, limit int) (results []SearchResult, stoppedBefore int64, err error) {
	sql := searchWordsSQL
	if strings.TrimSpace(q.Text) == "" {
		sql, q.Text = searchFiltersSQL, ""
	}
	rows, err := s.pool.Query(ctx, sql, workspaceID, q.Text, q.Project, q.From, OwnerSlug(ownerID), q.Type, q.In,
		pageBefore(beforeID), limit+1)
	if err != nil {
		return nil, 0, fmt.Errorf("store: search: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		// The one row of a search that found nothing carries only where it stopped.
		if rows.RawValues()[0] == nil {
			if err := rows.Scan(append(make([]any, len(rows.RawValues())-1), &stoppedBefore)...); err != nil {
				return nil, 0, fmt.Errorf("store: search: %w", err)
			}
			continue
		}
		var res SearchResult
		n, err := scanListedNote(rows, &res.SessionTitle, &res.ProjectID, &res.ProjectName, &res.Subject, &res.Snippet, &stoppedBefore)
		if err != nil {
			return nil, 0, fmt.Errorf("store: search: %w", err)
		}
		res.Note = *n
		results = append(results, res)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: search: %w", err)
	}
	return results, stoppedBefore, nil
}
