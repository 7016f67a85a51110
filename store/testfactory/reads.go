package testfactory

import "github.com/osfoundry/osfoundry/store"

// readSteps move the read marks and write the receipts of a fill. Agents
// that keep up have read every session they are in to its newest note, with
// a receipt for every note read_session_mail returned them; far-behind ones
// stopped a tenth into the notes of the first fill, and their marks stay.
// Owners have read all but the newest 5 notes of the busy sessions and the
// newest 2 of one quiet session in 7, and never opened the NeverRead ones.
func (sp *Spread) readSteps(a arrays) []step {
	return []step{
		{"agents' read marks", `
			INSERT INTO agent_mail_reads AS m (session_id, connection_id, read_through)
			SELECT i.session_id, i.connection_id, t.id
			FROM invitations i
			CROSS JOIN LATERAL (SELECT CASE WHEN i.connection_id = ANY($3::bigint[])
				THEN (SELECT max(n.id) FROM notes n WHERE n.session_id = i.session_id)
				ELSE (SELECT n.id FROM notes n WHERE n.session_id = i.session_id ORDER BY n.session_id, n.id
					OFFSET (SELECT count(*) / $4::int FROM notes c WHERE c.session_id = i.session_id) LIMIT 1) END AS id) t
			WHERE i.session_id = ANY($1) AND t.id IS NOT NULL AND $2::bigint >= 0
				AND (i.connection_id = ANY($3::bigint[]) OR NOT EXISTS (SELECT 1 FROM agent_mail_reads r
					WHERE r.session_id = i.session_id AND r.connection_id = i.connection_id))
			ON CONFLICT (session_id, connection_id) DO UPDATE SET read_through = greatest(m.read_through, EXCLUDED.read_through)`,
			[]any{a.keeping, farBehind}},
		// Receipts for what read_session_mail would have returned: written
		// since the last fill, up to the mark, with its rules for a read.
		{"receipts", `
			INSERT INTO note_receipts (note_id, connection_id, read_at, session_id, owner_note)
			SELECT n.id, m.connection_id, n.created_at + interval '1 minute', n.session_id, n.sender_kind = 'owner'
			FROM agent_mail_reads m JOIN connections c ON c.id = m.connection_id
			JOIN notes n ON n.session_id = m.session_id AND n.id > $2 AND n.id <= m.read_through
			WHERE m.session_id = ANY($1) AND ` + store.ReadableBySQL("m.connection_id", "c.sender_slug") + `
				AND ` + store.ReceiptForSQL("m.connection_id") + `
			ON CONFLICT DO NOTHING`, nil},
		{"owners' read marks", `
			INSERT INTO note_reads AS r (owner_id, session_id, last_read_note_id)
			SELECT s.created_by, s.id, t.id
			FROM sessions s
			CROSS JOIN LATERAL (SELECT n.id FROM notes n WHERE n.session_id = s.id ORDER BY n.session_id, n.id DESC
				OFFSET CASE WHEN s.id = ANY($3::bigint[]) THEN 5 WHEN s.id % 7 = 0 THEN 2 ELSE 0 END LIMIT 1) t
			WHERE s.id = ANY($1) AND $2::bigint >= 0 AND s.id <> ALL($4::bigint[])
			ON CONFLICT (owner_id, session_id) DO UPDATE SET last_read_note_id = EXCLUDED.last_read_note_id`,
			[]any{a.busyIDs, a.neverRead}},
	}
}
