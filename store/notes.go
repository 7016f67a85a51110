package store

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Message types of Team mail.
const (
	MessageNote     = "note"
	MessageReply    = "reply"
	MessageAnalysis = "analysis"
	// MessageQuestion is a question an agent asks the owners with ask_owner (questions.go).
	MessageQuestion = "question"
)

// SenderKind is who wrote a note: an owner in the web app, or a connection's agent through the MCP
// tools.
type SenderKind string

// The kinds of sender.
const (
	SenderOwner  SenderKind = "owner"
	SenderAgent  SenderKind = "agent"
	SenderSystem SenderKind = "system"
)

// SystemSlug and SystemName are osFoundry's sender slug and name on the
// notes it writes.
const (
	SystemSlug = "osfoundry"
	SystemName = "osFoundry"
)

// AgentLabel is how an agent's note is labelled wherever people read it.
const AgentLabel = "outside assistant"

// Limits of a note, the same for agents and owners, in characters.
const (
	MaxSubjectLen = 200
	MaxBodyLen    = 10000
)

// MaxIdempotencyKeyLen bounds an agent's idempotency key, in characters.
const MaxIdempotencyKeyLen = 200

// Note is one entry of a session's Team mail.
type Note struct {
	ID                 int64
	WorkspaceID        int64
	SessionID          int64
	SenderKind         SenderKind
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
	// InReplyTo is the note of the same session this one answers; nil when
	// it answers none.
	InReplyTo *int64

	// Where the note stands in its thread, filled by the queries that list notes for people to read
	// (listedColumns).
	Parent *NoteParent
	// Replies counts the notes that answer it, directly or further down.
	Replies int
	// Question is where the note stands as a question (MessageQuestion);
	// nil for any other note.
	Question *Question
	// Closes is the question this note closed, as its answer or as the notice that it expired.
	Closes *Question
}

// NoteParent is what a reply shows of the note it answers: its sender and
// the start of its text.
type NoteParent struct {
	ID         int64
	SenderName string
	SenderSlug string
	Subject    string
	// Excerpt is the start of its body (views.FirstLine takes its first line).
	Excerpt string
}

const noteColumns = `n.id, n.workspace_id, n.session_id, n.sender_kind, n.sender_owner_id, n.sender_connection_id,
	n.sender_slug, n.sender_name, n.recipient_slug, n.message_type, n.subject, n.body, n.idempotency_key, n.created_at,
	n.in_reply_to`

var listedColumns = noteColumns + `, parent.id, parent.sender_name, parent.sender_slug, parent.subject, left(parent.body, 400),
	(SELECT count(*) FROM (
		WITH RECURSIVE down AS (
			SELECT r.id FROM notes r WHERE r.in_reply_to = n.id
			UNION ALL SELECT r.id FROM notes r JOIN down ON r.in_reply_to = down.id)
		SELECT 1 FROM down) replies)::int,
	` + questionColumns("qn") + `, ` + questionColumns("qc")

const listedJoin = `LEFT JOIN notes parent ON parent.session_id = n.session_id AND parent.id = n.in_reply_to
	LEFT JOIN questions qn ON qn.note_id = n.id
	LEFT JOIN questions qc ON qc.note_id = n.in_reply_to AND qc.closing_note_id = n.id`

// FromAgent reports whether an agent wrote the note.
func (n *Note) FromAgent() bool { return n.SenderKind == SenderAgent }

// SentBy reports whether the owner wrote the note: their own note, which is
// never unread for them.
func (n *Note) SentBy(ownerID int64) bool {
	return n.SenderOwnerID != nil && *n.SenderOwnerID == ownerID
}

func scanNote(row pgx.Row, extra ...any) (*Note, error) {
	n := &Note{}
	err := row.Scan(append(n.targets(), extra...)...)
	return n, err
}

func (n *Note) targets() []any {
	return []any{&n.ID, &n.WorkspaceID, &n.SessionID, &n.SenderKind, &n.SenderOwnerID, &n.SenderConnectionID,
		&n.SenderSlug, &n.SenderName, &n.RecipientSlug, &n.MessageType, &n.Subject, &n.Body, &n.IdempotencyKey, &n.CreatedAt,
		&n.InReplyTo}
}

func scanListedNote(row pgx.Row, extra ...any) (*Note, error) {
	n := &Note{}
	var parentID *int64
	var name, slug, subject, excerpt *string
	var asked, closed nullableQuestion
	targets := append(n.targets(), &parentID, &name, &slug, &subject, &excerpt, &n.Replies)
	targets = append(append(targets, asked.targets()...), closed.targets()...)
	err := row.Scan(append(targets, extra...)...)
	if err != nil {
		return n, err
	}
	if parentID != nil {
		n.Parent = &NoteParent{ID: *parentID, SenderName: *name, SenderSlug: *slug, Subject: *subject, Excerpt: *excerpt}
	}
	n.Question, n.Closes = asked.question(), closed.question()
	return n, nil
}

func collectListedNotes(rows pgx.Rows, op string) ([]Note, error) {
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Note, error) {
		n, err := scanListedNote(r)
		return *n, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, err)
	}
	return out, nil
}
