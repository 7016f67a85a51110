package testfactory

import (
	"context"
	"fmt"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// CorpusOpts is a search corpus: Notes notes over Sessions of a workspace,
// from its Agents and, one in ten, its owner.
type CorpusOpts struct {
	WorkspaceID          int64
	OwnerID              int64
	OwnerName            string
	Sessions             []int64
	Agents               []*store.Profile
	Notes                int
	Rare, Medium, Common string // in one note in 100,000 ("Medium rounds" in one in 100, Common in three in ten)
	Log                  func(format string, args ...any)
}

// Corpus writes a search corpus: bodies of about 30 words drawn from a
// skewed vocabulary of 5,000, one note in 20 a reply to an agent and one in
// 20 analysis; sessions, senders and the words of known rates follow
// different strides of the note's number, so that no filter and word go
// together by construction. Then VACUUM ANALYZE notes.
func Corpus(ctx context.Context, db DB, o CorpusOpts) error {
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	var conns []int64
	var slugs, names []string
	for _, p := range o.Agents {
		conns, slugs, names = append(conns, p.ConnectionID), append(slugs, p.SenderSlug), append(names, p.DisplayName)
	}
	start := time.Now()
	for from := 0; from < o.Notes; from += noteBatch {
		to := min(o.Notes, from+noteBatch)
		if _, err := db.Exec(ctx, corpusSQL, o.WorkspaceID, o.Sessions, o.OwnerID, conns, slugs, names, from, to,
			store.OwnerSlug(o.OwnerID), o.OwnerName, o.Rare, " "+o.Medium+" rounds", o.Common); err != nil {
			return fmt.Errorf("testfactory: corpus: %w", err)
		}
		o.Log("%d of %d notes (%.0f s)", to, o.Notes, time.Since(start).Seconds())
	}
	if _, err := db.Exec(ctx, `VACUUM (ANALYZE) notes`); err != nil {
		return fmt.Errorf("testfactory: vacuum: %w", err)
	}
	return nil
}

// corpusSQL writes notes $7 to $8 - 1 of a corpus.
const corpusSQL = `
	INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id, sender_slug, sender_name,
		recipient_slug, message_type, subject, body)
	SELECT $1, ($2::bigint[])[1 + (g / 11) % cardinality($2::bigint[])], x.kind, CASE WHEN x.kind = 'owner' THEN $3::bigint END,
		CASE WHEN x.kind = 'agent' THEN ($4::bigint[])[1 + (g / 3) % cardinality($4::bigint[])] END,
		CASE WHEN x.kind = 'agent' THEN ($5::text[])[1 + (g / 3) % cardinality($5::text[])] ELSE $9::text END,
		CASE WHEN x.kind = 'agent' THEN ($6::text[])[1 + (g / 3) % cardinality($6::text[])] ELSE $10::text END,
		CASE WHEN g % 20 = 3 THEN ($5::text[])[1 + (g / 3) % cardinality($5::text[])] END,
		CASE WHEN g % 20 = 3 THEN 'reply' WHEN g % 20 = 13 THEN 'analysis' ELSE 'note' END,
		'w' || floor(5000 * random() ^ 3)::int || ' ' || 'w' || floor(5000 * random() ^ 3)::int,
		(SELECT string_agg('w' || floor(5000 * random() ^ 3)::int, ' ') FROM generate_series(1, 28 + g % 5))
			|| CASE WHEN g % 100000 = 7 THEN ' ' || $11::text ELSE '' END
			|| CASE WHEN g % 100 = 11 THEN $12::text ELSE '' END
			|| CASE WHEN g % 10 < 3 THEN ' ' || $13::text ELSE '' END
	FROM generate_series($7::int, $8::int - 1) g
	CROSS JOIN LATERAL (SELECT CASE WHEN g % 10 = 3 THEN 'owner' ELSE 'agent' END AS kind) x`
