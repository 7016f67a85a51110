package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// BenchmarkUnreadHint times what an agent's unread hint costs its calls, for
// an agent invited to 1 and to 50 sessions of 400 notes each (half of them
// owners' notes to the whole session), never read or read to the top: the
// token check every call runs (UseAccessToken) and read_session_mail of one
// session. The growth from 1 to 50 sessions is the figure to read.
func BenchmarkUnreadHint(b *testing.B) {
	ctx := context.Background()
	for _, sessions := range []int{1, 50} {
		f := newMailFixture(b)
		db := storetest.SQL(b, f.st)
		ws := f.owner.WorkspaceID
		db.Exec(`
			INSERT INTO sessions (workspace_id, project_id, session_type, public_id, title)
			SELECT $1, $2, 'team_session', 'other-' || i, 'Other' FROM generate_series(1, 3000) i`, ws, f.sess.ProjectID)
		db.Exec(`
			INSERT INTO invitations (workspace_id, session_id, connection_id, role)
			SELECT $1, s.id, $2, 'contributor' FROM sessions s WHERE s.public_id LIKE 'other-%' ORDER BY s.id LIMIT $3`, ws, f.connID, sessions-1)
		db.Exec(`
			INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id, sender_slug, sender_name,
				message_type, subject, body)
			SELECT $1, i.session_id, CASE WHEN g % 2 = 0 THEN 'owner' ELSE 'agent' END,
				CASE WHEN g % 2 = 0 THEN $2::bigint END, CASE WHEN g % 2 = 1 THEN $3::bigint END,
				CASE WHEN g % 2 = 0 THEN owner_slug($2::bigint) ELSE 'ada' END, 'N', 'note', 's', 'b'
			FROM generate_series(1, 400) g CROSS JOIN invitations i WHERE i.connection_id = $3
			ORDER BY g, i.session_id`, ws, f.owner.ID, f.connID)
		const resource = "http://localhost:8080/mcp"
		token, _, err := f.st.MintAccessToken(ctx, f.connID, resource, store.AllScopes, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		for _, state := range []string{"never read", "read to the top"} {
			if state == "read to the top" {
				db.Exec(`
					INSERT INTO agent_mail_reads (session_id, connection_id, read_through)
					SELECT i.session_id, $1, (SELECT max(n.id) FROM notes n WHERE n.session_id = i.session_id) FROM invitations i WHERE i.connection_id = $1
					ON CONFLICT (session_id, connection_id) DO UPDATE SET read_through = EXCLUDED.read_through`, f.connID)
			}
			allVisible(b, db)
			name := strconv.Itoa(sessions) + " sessions, " + state
			b.Run(name+"/token check", func(b *testing.B) {
				for b.Loop() {
					if _, err := f.st.UseAccessToken(ctx, token, resource); err != nil {
						b.Fatal(err)
					}
				}
			})
			// A page near the oldest notes, which moves no mark past the state's.
			var before int64
			if err := db.QueryRow(`SELECT min(id) + 30 FROM notes WHERE session_id = $1`, f.sess.ID).Scan(&before); err != nil {
				b.Fatal(err)
			}
			b.Run(name+"/read_session_mail", func(b *testing.B) {
				for b.Loop() {
					if _, _, err := f.st.ReadAgentMail(ctx, ws, f.connID, f.sess.Type, f.sess.PublicID, before, 10); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
