package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Message types of Team mail.
const (
	MessageNote     = "note"
	MessageReply    = "reply"
	MessageAnalysis = "analysis"
)

// AgentLabel is how an agent's note is labelled wherever people read it.
const AgentLabel = "outside assistant"

// Limits of a note, the same for agents and owners.
const (
	MaxSubjectLen = 200
	MaxBodyLen    = 10000
)

// NotesChannel is the PostgreSQL NOTIFY channel announcing new notes; the
// payload is "<session id>:<note id>".
const NotesChannel = "osfoundry_notes"

// Note is one entry of a session's Team mail.
type Note struct {
	ID                 int64
	WorkspaceID        int64
	SessionID          int64
	SenderKind         string // "owner" or "agent"
	SenderOwnerID      *int64
	SenderConnectionID *int64
	SenderSlug         string
	SenderName         string
	// RecipientSlug is nil for a note to the whole session.
	RecipientSlug  *string
	MessageType    string
	Subject        string
	Body           string
	IdempotencyKey *string
	CreatedAt      time.Time
}

const noteColumns = `n.id, n.workspace_id, n.session_id, n.sender_kind, n.sender_owner_id, n.sender_connection_id,
	n.sender_slug, n.sender_name, n.recipient_slug, n.message_type, n.subject, n.body, n.idempotency_key, n.created_at`

func scanNote(row pgx.Row) (*Note, error) {
	n := &Note{}
	err := row.Scan(&n.ID, &n.WorkspaceID, &n.SessionID, &n.SenderKind, &n.SenderOwnerID, &n.SenderConnectionID,
		&n.SenderSlug, &n.SenderName, &n.RecipientSlug, &n.MessageType, &n.Subject, &n.Body, &n.IdempotencyKey, &n.CreatedAt)
	return n, err
}

// insertNote writes a note, its note_posted resource event, its webhook
// deliveries (the outbox) and the change notifications inside tx: all commit
// together or not at all. Analysis notes get neither event nor deliveries. For agent
// notes with an idempotency key, a conflicting (connection, key) returns
// (nil, nil) so that the caller can load the first note.
//
// It locks the session row before the note takes its id, so the writers of
// one session take ids in the order they commit: a reader that has seen note
// N never sees a note < N of that session appear later, and "id > last seen"
// is a safe cursor (web polls, agents catching up from the top).
func insertNote(ctx context.Context, tx pgx.Tx, n *Note) (*Note, error) {
	// The session row is locked before the note takes its id, so that within a
	// session ids become visible in increasing order. A note that gets an event
	// takes the lock by reserving the event's sequence number; an analysis note
	// (no event) locks it alone.
	var seq, projectID int64
	if n.MessageType != MessageAnalysis {
		if err := tx.QueryRow(ctx, `
			UPDATE sessions SET last_event_seq = last_event_seq + 1, updated_at = now()
			WHERE id = $1 RETURNING last_event_seq, project_id`, n.SessionID).Scan(&seq, &projectID); err != nil {
			return nil, fmt.Errorf("reserve event sequence: %w", err)
		}
	} else if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE`, n.SessionID); err != nil {
		return nil, fmt.Errorf("lock session: %w", err)
	}
	q := `INSERT INTO notes AS n (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id,
			sender_slug, sender_name, recipient_slug, message_type, subject, body, idempotency_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`
	if n.IdempotencyKey != nil {
		q += ` ON CONFLICT (sender_connection_id, idempotency_key) DO NOTHING`
	}
	q += ` RETURNING ` + noteColumns
	out, err := scanNote(tx.QueryRow(ctx, q, n.WorkspaceID, n.SessionID, n.SenderKind, n.SenderOwnerID, n.SenderConnectionID,
		n.SenderSlug, n.SenderName, n.RecipientSlug, n.MessageType, n.Subject, n.Body, n.IdempotencyKey))
	if errors.Is(err, pgx.ErrNoRows) && n.IdempotencyKey != nil {
		// The reserved sequence number must not be committed: the caller rolls back.
		return nil, errDuplicateKey
	}
	if err != nil {
		return nil, err
	}
	notify := strconv.FormatInt(out.SessionID, 10) + ":" + strconv.FormatInt(out.ID, 10)
	if out.MessageType == MessageAnalysis {
		// Analysis notes are owner-only: agents read events, so they get none.
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotesChannel, notify); err != nil {
			return nil, fmt.Errorf("notify: %w", err)
		}
		return out, nil
	}
	payload, err := json.Marshal(map[string]any{"note_id": out.ID, "sender_slug": out.SenderSlug, "message_type": out.MessageType})
	if err != nil {
		return nil, err
	}
	// The event, the webhook outbox rows and the change notifications in one
	// statement: a delivery per enabled endpoint of the project that this
	// note fires (agents' notes fire every endpoint, owners' notes those set
	// to all notes), and a wake-up for the senders when there is any.
	if _, err := tx.Exec(ctx, `
		WITH ev AS (
			INSERT INTO resource_events (session_id, sequence, kind, note_id, payload)
			VALUES ($1, $2, 'note_posted', $3, $4)
		), outbox AS (
			INSERT INTO webhook_deliveries (endpoint_id, note_id)
			SELECT e.id, $3 FROM webhook_endpoints e
			WHERE e.project_id = $7 AND e.enabled AND ($8 OR e.fires = 'all')
			RETURNING id
		)
		SELECT pg_notify($5, $6), (SELECT pg_notify($9, '') FROM outbox LIMIT 1)`,
		out.SessionID, seq, out.ID, payload, NotesChannel, notify, projectID, out.SenderKind == "agent", WebhooksChannel); err != nil {
		return nil, fmt.Errorf("event, outbox and notify: %w", err)
	}
	return out, nil
}

// errDuplicateKey tells a caller of insertNote that the (connection,
// idempotency key) already has a note; the transaction must be rolled back.
var errDuplicateKey = errors.New("idempotency key already used")

// AgentNote is the input of PostAgentNote: a note from a connection's agent
// to the whole session, addressed by the (type, public id) agents use.
type AgentNote struct {
	WorkspaceID    int64
	ConnectionID   int64
	SessionType    string
	SessionID      string
	Subject        string
	Body           string
	IdempotencyKey string
}

// MaxIdempotencyKeyLen bounds an agent's idempotency key.
const MaxIdempotencyKeyLen = 200

// Validate checks the lengths of an agent note.
func (a AgentNote) Validate() error {
	switch {
	case utf8.RuneCountInString(a.Subject) > MaxSubjectLen:
		return &FieldError{"subject", "use at most 200 characters"}
	case utf8.RuneCountInString(a.Body) > MaxBodyLen:
		return &FieldError{"body", "use at most 10000 characters"}
	case a.IdempotencyKey == "" || utf8.RuneCountInString(a.IdempotencyKey) > MaxIdempotencyKeyLen:
		return &FieldError{"idempotency_key", "use 1 to 200 characters"}
	}
	return nil
}

// ErrKeyReused means an idempotency key was sent again with a different
// session, subject or body; nothing was written.
var ErrKeyReused = &FieldError{"idempotency_key", "already used for a different note; send the same session, subject and body to retry, or use a new key for a new note"}

// PostAgentNote adds a note from the connection's agent to the whole session,
// with its resource event and change notification, in one transaction. The
// connection must be invited (ErrForbidden), the session must exist in its
// workspace (ErrNotFound), and the agent must have claimed a profile
// (ErrNoProfile). One row exists per (connection, idempotency key), enforced
// by a unique constraint: posting the same key again returns the first note
// with duplicate true, also when retries race; the same key with a different
// session, subject or body gives ErrKeyReused and writes nothing.
func (s *Store) PostAgentNote(ctx context.Context, in AgentNote) (note *Note, duplicate bool, err error) {
	if err := in.Validate(); err != nil {
		return nil, false, err
	}
	var sessionID int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		// The session, the caller's invitation and its profile in one statement:
		// no row means no such session, a NULL role means not invited, a NULL
		// name or slug means no claimed profile.
		var role, name, slug *string
		err := tx.QueryRow(ctx, `
			SELECT s.id, i.role, p.display_name, c.sender_slug
			FROM sessions s
			LEFT JOIN invitations i ON i.session_id = s.id AND i.connection_id = $2
			LEFT JOIN agent_profiles p ON p.workspace_id = $1 AND p.connection_id = $2
			LEFT JOIN connections c ON c.id = p.connection_id
			WHERE s.workspace_id = $1 AND s.session_type = $3 AND s.public_id = $4`,
			in.WorkspaceID, in.ConnectionID, in.SessionType, in.SessionID).Scan(&sessionID, &role, &name, &slug)
		switch {
		case err != nil:
			return err
		case role == nil:
			return ErrForbidden
		case name == nil || slug == nil:
			return ErrNoProfile
		}
		note, err = insertNote(ctx, tx, &Note{WorkspaceID: in.WorkspaceID, SessionID: sessionID, SenderKind: "agent",
			SenderConnectionID: &in.ConnectionID, SenderSlug: *slug, SenderName: *name, MessageType: MessageNote,
			Subject: in.Subject, Body: in.Body, IdempotencyKey: &in.IdempotencyKey})
		return err
	})
	if errors.Is(err, errDuplicateKey) {
		// The key was used before (possibly by a retry committed a moment ago;
		// the insert waited for it): this statement sees the committed first note.
		first, err := scanNote(s.pool.QueryRow(ctx, `SELECT `+noteColumns+` FROM notes n
			WHERE n.sender_connection_id = $1 AND n.idempotency_key = $2`, in.ConnectionID, in.IdempotencyKey))
		if err != nil {
			return nil, false, wrap("post note: load first note", err)
		}
		if first.SessionID != sessionID || first.Subject != in.Subject || first.Body != in.Body {
			return nil, false, ErrKeyReused
		}
		return first, true, nil
	}
	if err != nil {
		return nil, false, wrap("post note", err)
	}
	return note, false, nil
}

// MaxMailPage is the largest page read_session_mail returns.
const MaxMailPage = 20

// ReadAgentMail returns a page of the Team mail the connection may read in a
// session it is invited to: notes to its sender slug, notes to the whole
// session, and the notes it posted; never analysis notes. Newest first; with
// beforeID > 0 only notes with a smaller id. It returns limit+1 rows at most
// so that the caller can tell whether an older page exists.
func (s *Store) ReadAgentMail(ctx context.Context, workspaceID, connectionID int64, sessionType, publicID string, beforeID int64, limit int) ([]Note, error) {
	if limit < 1 || limit > MaxMailPage {
		return nil, &FieldError{"limit", "use 1 to 20"}
	}
	// One statement: the session and the caller's invitation (an empty result
	// means no such session, a NULL role means not invited), and the page of
	// mail on the same row(s) — a single round trip on the hottest read.
	rows, err := s.pool.Query(ctx, `
		WITH target AS (
			SELECT s.id, i.role
			FROM sessions s
			LEFT JOIN invitations i ON i.session_id = s.id AND i.connection_id = $2
			WHERE s.workspace_id = $1 AND s.session_type = $3 AND s.public_id = $4
		)
		SELECT target.role, `+noteColumns+`
		FROM target
		LEFT JOIN LATERAL (
			SELECT * FROM notes n
			WHERE target.role IS NOT NULL AND n.session_id = target.id AND n.message_type <> 'analysis'
				AND (n.recipient_slug IS NULL
					OR n.recipient_slug = (SELECT sender_slug FROM connections WHERE id = $2)
					OR n.sender_connection_id = $2)
				AND ($5 = 0 OR n.id < $5)
			-- Ordered as notes_session_idx (session_id, id DESC) is, so even a
			-- generic plan walks that index instead of the whole table by id.
			ORDER BY n.session_id, n.id DESC
			LIMIT $6
		) n ON true
		ORDER BY n.id DESC`, workspaceID, connectionID, sessionType, publicID, beforeID, limit+1)
	if err != nil {
		return nil, fmt.Errorf("store: read mail: %w", err)
	}
	defer rows.Close()
	found := false
	var out []Note
	for rows.Next() {
		found = true
		var role *string
		var n nullableNote
		if err := rows.Scan(append([]any{&role}, n.targets()...)...); err != nil {
			return nil, fmt.Errorf("store: read mail: %w", err)
		}
		if role == nil {
			return nil, fmt.Errorf("store: read mail: %w", ErrForbidden)
		}
		if n.ID != nil {
			out = append(out, n.note())
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read mail: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("store: read mail: %w", ErrNotFound)
	}
	return out, nil
}

// nullableNote scans the note columns of an outer join, where a row may
// carry no note.
type nullableNote struct {
	ID, WorkspaceID, SessionID        *int64
	SenderKind                        *string
	SenderOwnerID, SenderConnectionID *int64
	SenderSlug, SenderName            *string
	RecipientSlug                     *string
	MessageType, Subject, Body        *string
	IdempotencyKey                    *string
	CreatedAt                         *time.Time
}

func (n *nullableNote) targets() []any {
	return []any{&n.ID, &n.WorkspaceID, &n.SessionID, &n.SenderKind, &n.SenderOwnerID, &n.SenderConnectionID,
		&n.SenderSlug, &n.SenderName, &n.RecipientSlug, &n.MessageType, &n.Subject, &n.Body, &n.IdempotencyKey, &n.CreatedAt}
}

func (n *nullableNote) note() Note {
	return Note{ID: *n.ID, WorkspaceID: *n.WorkspaceID, SessionID: *n.SessionID, SenderKind: *n.SenderKind,
		SenderOwnerID: n.SenderOwnerID, SenderConnectionID: n.SenderConnectionID, SenderSlug: *n.SenderSlug,
		SenderName: *n.SenderName, RecipientSlug: n.RecipientSlug, MessageType: *n.MessageType, Subject: *n.Subject,
		Body: *n.Body, IdempotencyKey: n.IdempotencyKey, CreatedAt: *n.CreatedAt}
}
