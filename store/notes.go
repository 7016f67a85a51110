package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Message types of Team mail.
const (
	MessageNote     = "note"
	MessageReply    = "reply"
	MessageAnalysis = "analysis"
	// MessageQuestion is a question an agent asks the owners with ask_owner
	// (questions.go); its answer is an owner's reply to it.
	MessageQuestion = "question"
)

// SenderKind is who wrote a note: an owner in the web app, or a connection's
// agent through the MCP tools. Its values are those the notes.sender_kind
// check of the schema allows.
type SenderKind string

// The kinds of sender. SenderSystem is osFoundry itself, which writes one
// kind of note: the reply that tells an agent its question expired
// unanswered.
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

	// Where the note stands in its thread, filled by the queries that list
	// notes for people to read (listedColumns); zero elsewhere.
	//
	// Parent is the note it answers, as a reply quotes it.
	Parent *NoteParent
	// Replies counts the notes that answer it, directly or further down.
	Replies int
	// Question is where the note stands as a question (MessageQuestion);
	// nil for any other note.
	Question *Question
	// Closes is the question this note closed, as its answer or as the
	// notice that it expired; nil for any other note.
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

// listedColumns are noteColumns and the note's place in its thread (Parent,
// Replies), for queries of notes n joined with listedJoin: the parent by the
// session's own index, and the replies down the thread by notes_replies_idx,
// which holds replies only.
var listedColumns = noteColumns + `, parent.id, parent.sender_name, parent.sender_slug, parent.subject, left(parent.body, 400),
	(SELECT count(*) FROM (
		WITH RECURSIVE down AS (
			SELECT r.id FROM notes r WHERE r.in_reply_to = n.id
			UNION ALL SELECT r.id FROM notes r JOIN down ON r.in_reply_to = down.id)
		SELECT 1 FROM down) replies)::int,
	` + questionColumns("qn") + `, ` + questionColumns("qc")

// listedJoin joins a note n with its parent for listedColumns, and with the
// question it is (qn) or closed (qc), both by the questions' primary key.
const listedJoin = `LEFT JOIN notes parent ON parent.session_id = n.session_id AND parent.id = n.in_reply_to
	LEFT JOIN questions qn ON qn.note_id = n.id
	LEFT JOIN questions qc ON qc.note_id = n.in_reply_to AND qc.closing_note_id = n.id`

// FromAgent reports whether an agent wrote the note: it carries AgentLabel
// wherever people read it, and it is the only kind an owner's reply can
// answer (its sender slug is where the reply goes).
func (n *Note) FromAgent() bool { return n.SenderKind == SenderAgent }

// SentBy reports whether the owner wrote the note: their own note, which is
// never unread for them.
func (n *Note) SentBy(ownerID int64) bool {
	return n.SenderOwnerID != nil && *n.SenderOwnerID == ownerID
}

// scanNote scans noteColumns, then extra.
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

// scanListedNote scans listedColumns, then extra.
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

// collectListedNotes collects the rows of a query of listedColumns.
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

// insertNote writes a note, its note_posted resource event and its webhook
// deliveries (the outbox) in one statement (noteWriteSQL): all commit
// together or not at all, in a transaction of their own when q is the pool.
// It returns the notifications the note calls for, which the caller sends
// with notifyAfterCommit once the note has committed. For notes with an idempotency
// key, a conflicting (connection, key) writes nothing and returns
// errDuplicateKey, so that the caller can load the first note.
func insertNote(ctx context.Context, q queryRower, n *Note) (*Note, []notification, error) {
	sql := insertNoteOnce
	if n.IdempotencyKey != nil {
		sql = insertNoteIdempotent
	}
	out, announced, err := writeNote(ctx, q, sql, n.WorkspaceID, n.SessionID, n.SenderKind, n.SenderOwnerID, n.SenderConnectionID,
		n.SenderSlug, n.SenderName, n.RecipientSlug, n.MessageType, n.Subject, n.Body, n.IdempotencyKey, n.InReplyTo)
	if errors.Is(err, pgx.ErrNoRows) && n.IdempotencyKey != nil {
		return nil, nil, errDuplicateKey
	}
	return out, announced, err
}

// writeNote runs a statement of noteWriteSQL and returns the note it wrote
// and the notifications the note calls for (NoteTopic's, and a wake-up
// for the webhook senders when it made deliveries); pgx.ErrNoRows when it
// wrote none.
func writeNote(ctx context.Context, q queryRower, sql string, args ...any) (*Note, []notification, error) {
	var deliveries int64
	out, err := scanNote(q.QueryRow(ctx, sql, args...), &deliveries)
	if err != nil {
		return nil, nil, fmt.Errorf("write note: %w", err)
	}
	announced := []notification{NoteTopic.notification(NoteNotice{SessionID: out.SessionID, NoteID: out.ID, Sent: time.Now()})}
	if deliveries > 0 {
		announced = append(announced, WebhookTopic.notification(struct{}{}))
	}
	return out, announced, nil
}

// queryRower is what writeNote needs of a pool or a transaction.
type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// noteWriteSQL is the statement that writes the note its CTE src yields (at
// most one row, with the columns of notes a writer sets: workspace_id,
// session_id, sender_kind, sender_owner_id, sender_connection_id,
// sender_slug, sender_name, recipient_slug, message_type, subject, body,
// idempotency_key, in_reply_to); conflict ends the note's INSERT. The rest:
//
//   - locked: the session row, locked before the note takes its id, so the
//     writers of one session take ids in the order they commit: a reader
//     that has seen note N never sees a note < N of that session appear
//     later, and "id > last seen" is a safe cursor (web polls, agents
//     catching up from the top);
//   - note: the note (with an idempotency key, nothing on a conflict);
//   - seq: the session's next event sequence number, reserved only for a
//     note that was written and gets an event (a duplicate leaves no gap);
//   - ev: the event (analysis notes are owner-only: agents read events, so
//     they get none);
//   - outbox: a delivery per enabled endpoint of the project that the note
//     fires (agents' notes fire every endpoint, owners' notes those set to
//     all notes, analysis notes none, questions none: their timer queues
//     their own event when the owners are to be reached off the page);
//   - extra: more CTEs that write what the note brings with it (a
//     question's row), which may read note and locked.
//
// It answers the note and its count of deliveries; no row means nothing was
// written.
func noteWriteSQL(src, conflict string, extra ...string) string {
	more := ""
	for _, e := range extra {
		more += ", " + e
	}
	return `
	WITH ` + src + `, locked AS (
		SELECT s.id, s.project_id FROM sessions s JOIN src ON s.id = src.session_id FOR NO KEY UPDATE OF s
	), note AS (
		INSERT INTO notes AS n (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id,
			sender_slug, sender_name, recipient_slug, message_type, subject, body, idempotency_key, in_reply_to)
		SELECT src.workspace_id, locked.id, src.sender_kind, src.sender_owner_id, src.sender_connection_id,
			src.sender_slug, src.sender_name, src.recipient_slug, src.message_type, src.subject, src.body, src.idempotency_key,
			src.in_reply_to
		FROM src, locked
		` + conflict + `
		RETURNING ` + noteColumns + `
	), seq AS (
		UPDATE sessions s SET last_event_seq = s.last_event_seq + 1, updated_at = now()
		FROM note WHERE s.id = note.session_id AND ` + notePosted("note") + `
		RETURNING s.last_event_seq
	), ev AS (
		INSERT INTO resource_events (session_id, sequence, kind, note_id, payload)
		SELECT note.session_id, seq.last_event_seq, 'note_posted', note.id,
			` + notePostedPayload("note") + `
		FROM note, seq
	), outbox AS (
		INSERT INTO webhook_deliveries (endpoint_id, note_id)
		SELECT e.id, note.id FROM note, locked, webhook_endpoints e
		WHERE e.project_id = locked.project_id AND note.message_type NOT IN ('analysis', 'question')
			AND e.enabled AND (note.sender_kind = 'agent' OR e.fires = 'all')
		RETURNING id
	)` + more + `
	SELECT n.*, (SELECT count(*) FROM outbox) FROM note n`
}

// onKeyConflict ends the INSERT of a note with an idempotency key.
const onKeyConflict = `ON CONFLICT (sender_connection_id, idempotency_key) DO NOTHING`

// noteValues is the src of insertNote: the note as its thirteen parameters.
const noteValues = `src AS (
		SELECT $1::bigint AS workspace_id, $2::bigint AS session_id, $3::text AS sender_kind, $4::bigint AS sender_owner_id,
			$5::bigint AS sender_connection_id, $6::text AS sender_slug, $7::text AS sender_name, $8::text AS recipient_slug,
			$9::text AS message_type, $10::text AS subject, $11::text AS body, $12::text AS idempotency_key,
			$13::bigint AS in_reply_to)`

var (
	insertNoteOnce       = noteWriteSQL(noteValues, "")
	insertNoteIdempotent = noteWriteSQL(noteValues, onKeyConflict)
)

// agentNoteTarget is what an agent's note needs of the database, $1 the
// workspace, $2 the caller's connection, $3 and $4 the session's type and
// public id, $5 the reply's recipient (empty for the whole session), $6 the
// owner id that recipient names (if any), $7 the note it answers (0 for
// none): the session, the caller's invitation role, its profile's name and
// sender slug, whether the recipient is known (an owner of the workspace or
// a live connection invited to the session), and whether the note it
// answers is one of the session's that the caller may read (readableBy). No
// row means no such session, a NULL role not invited, a NULL name or slug no
// claimed profile.
var agentNoteTarget = `
	SELECT s.workspace_id, s.id, i.role, p.display_name, c.sender_slug,
		$5::text = '' OR EXISTS (SELECT 1 FROM owners o WHERE o.workspace_id = $1 AND o.id = $6)
			OR EXISTS (SELECT 1 FROM invitations ri JOIN connections rc ON rc.id = ri.connection_id
				WHERE ri.session_id = s.id AND rc.sender_slug = $5 AND rc.revoked_at IS NULL) AS known,
		$7::bigint = 0 OR EXISTS (SELECT 1 FROM notes n WHERE n.session_id = s.id AND n.id = $7
			AND ` + readableBy("$2", "c.sender_slug") + `) AS parent_known
	FROM sessions s
	LEFT JOIN invitations i ON i.session_id = s.id AND i.connection_id = $2
	LEFT JOIN agent_profiles p ON p.workspace_id = $1 AND p.connection_id = $2
	LEFT JOIN connections c ON c.id = p.connection_id
	WHERE s.workspace_id = $1 AND s.session_type = $3 AND s.public_id = $4`

// agentNoteWriteSQL is the one statement that writes an agent's note when
// agentNoteTarget allows it (the rule: invited, a claimed profile, a known
// recipient that is not the caller, a readable note answered) and its
// connection's write bucket gives it a token (writeBucket), $8 to $11 its
// type, subject, body and idempotency key, $12 the seconds a minute of the
// write limits lasts; extra CTEs write what goes with the note (a
// question's row). No row: refused or a duplicate key; PostAgentNote asks
// agentNoteTarget which.
func agentNoteWriteSQL(extra ...string) string {
	return noteWriteSQL(`target AS (`+agentNoteTarget+`
	), `+writeBucket("$12")+`, src AS (
		SELECT t.workspace_id, t.id AS session_id, 'agent'::text AS sender_kind, NULL::bigint AS sender_owner_id,
			$2::bigint AS sender_connection_id, t.sender_slug, t.display_name AS sender_name,
			NULLIF($5::text, '') AS recipient_slug, $8::text AS message_type, $9::text AS subject, $10::text AS body,
			$11::text AS idempotency_key, NULLIF($7::bigint, 0) AS in_reply_to
		FROM target t
		WHERE t.role IS NOT NULL AND t.display_name IS NOT NULL AND t.sender_slug IS NOT NULL
			AND t.sender_slug <> $5::text AND t.known AND t.parent_known AND `+granted+`)`, onKeyConflict, extra...)
}

// agentNoteSQL writes an agent's note (agentNoteWriteSQL).
var agentNoteSQL = agentNoteWriteSQL()

// errDuplicateKey tells a caller of insertNote that the (connection,
// idempotency key) already has a note; nothing was written.
var errDuplicateKey = errors.New("idempotency key already used")

// AgentNote is the input of PostAgentNote: a note from a connection's agent
// in a session addressed by the (type, public id) agents use, to the whole
// session or, as a reply, to one sender.
type AgentNote struct {
	WorkspaceID  int64
	ConnectionID int64
	SessionType  string
	SessionID    string
	// To is the sender slug a reply goes to (reply_to_sender): an owner of
	// the workspace or a live connection invited to the session. Empty, the
	// note goes to the whole session (post_session_note).
	To string
	// InReplyTo is the note of the session the reply answers (0: none); it
	// must be one the caller may read.
	InReplyTo      int64
	Subject        string
	Body           string
	IdempotencyKey string
	// Question makes the note a question to the session's owners
	// (MessageQuestion, ask_owner): Body is the question, Subject empty.
	Question *QuestionAsk
}

// messageType is MessageQuestion for a question, MessageReply for a note to
// one sender, else MessageNote.
func (a AgentNote) messageType() string {
	switch {
	case a.Question != nil:
		return MessageQuestion
	case a.To != "":
		return MessageReply
	}
	return MessageNote
}

// ErrBlankNote refuses a note whose subject and body are both blank: it
// would tell its readers nothing.
var ErrBlankNote = &FieldError{"body", "write a message: the subject and the body are both blank"}

// Validate checks the lengths of an agent note, and that it says something.
func (a AgentNote) Validate() error {
	if a.Question != nil {
		if err := a.Question.validate(a.Body); err != nil {
			return err
		}
	}
	if strings.TrimSpace(a.Subject) == "" && strings.TrimSpace(a.Body) == "" {
		return ErrBlankNote
	}
	if err := checkNoteText(a.Subject, a.Body); err != nil {
		return err
	}
	if a.IdempotencyKey == "" || utf8.RuneCountInString(a.IdempotencyKey) > MaxIdempotencyKeyLen {
		return &FieldError{"idempotency_key", fmt.Sprintf("use 1 to %d characters", MaxIdempotencyKeyLen)}
	}
	return nil
}

// ErrKeyReused means an idempotency key was sent again with a different
// session, recipient, subject or body (or by the other of the two posting
// tools); nothing was written.
var ErrKeyReused = &FieldError{"idempotency_key", "already used for a different note; send the same session, recipient, subject and body to retry, or use a new key for a new note"}

// keyReused is ErrKeyReused, or ErrQuestionKeyReused for a question.
func (a AgentNote) keyReused() error {
	if a.Question != nil {
		return ErrQuestionKeyReused
	}
	return ErrKeyReused
}

// ErrNoSuchSender means a reply's recipient is neither an owner of the
// workspace nor a live connection invited to the session.
var ErrNoSuchSender = &FieldError{"to", "no such sender in this session: use the from of a note read_session_mail returned (an owner's or an invited agent's sender slug)"}

// ErrNoSuchParent means a reply names, as the note it answers, no note of
// the session that the caller may read.
var ErrNoSuchParent = &FieldError{"in_reply_to", "not a note of this session you can read: use the id of a note read_session_mail returned"}

// ErrReplyToSelf means a reply was addressed to the caller's own slug.
var ErrReplyToSelf = &FieldError{"to", "that is your own sender slug; reply to another sender, or write to the whole session with post_session_note"}

// PostAgentNote adds a note from the connection's agent, to the whole session
// or as a reply to in.To, with its resource event and webhook deliveries, in
// one statement that also checks the caller may (agentNoteSQL); then
// announces it. The connection must be invited (ErrForbidden), the
// session must exist in its workspace (ErrNotFound), and the agent must have
// claimed a profile (ErrNoProfile); a reply's recipient must be an owner of
// the workspace or a live connection invited to the session
// (ErrNoSuchSender), not the caller (ErrReplyToSelf), and the note it
// answers, if any, one of the session's the caller may read
// (ErrNoSuchParent). One row exists per
// (connection, idempotency key), enforced by a unique constraint: posting the
// same key again returns the first note with duplicate true, also when
// retries race; the same key with a different session, recipient, note
// answered, subject or body gives ErrKeyReused and writes nothing. Posting starts nothing else.
// Each post draws on the connection's write bucket (*WriteLimited when it
// is empty), and a question past MaxOpenQuestions is ErrTooManyQuestions.
func (s *Store) PostAgentNote(ctx context.Context, in AgentNote) (note *Note, duplicate bool, err error) {
	if err := in.Validate(); err != nil {
		return nil, false, err
	}
	ownerID, _ := ParseOwnerSlug(in.To)
	args := []any{in.WorkspaceID, in.ConnectionID, in.SessionType, in.SessionID, in.To, ownerID, in.InReplyTo,
		in.messageType(), in.Subject, in.Body, in.IdempotencyKey, s.writeMinuteSeconds()}
	sql := agentNoteSQL
	if in.Question != nil {
		sql = agentQuestionSQL
		args = append(args, in.Question.Options, in.Question.Urgency, s.questionMinute.Seconds())
	}
	// Twice at most: a note refused for a reason that was gone by the time
	// the reason was looked for (an invitation added in between) is written
	// on the second pass.
	for range 2 {
		note, announced, err := writeNote(ctx, s.pool, sql, args...)
		if err == nil {
			if in.Question != nil {
				announced = append(announced, TimerTopic.notification(struct{}{}))
			}
			s.notifyAfterCommit(announced...)
			return note, false, nil
		}
		if isTooManyQuestions(err) {
			return nil, false, ErrTooManyQuestions
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, false, wrap("post note", err)
		}
		// Nothing written: past the write limit, refused, or the key was
		// used before (possibly by a retry committed a moment ago; the
		// insert waited for it).
		if err := s.writeRefused(ctx, in.ConnectionID); err != nil {
			var wl *WriteLimited
			if errors.As(err, &wl) {
				return nil, false, err
			}
			return nil, false, wrap("post note", err)
		}
		var workspaceID, sessionID int64
		var role, name, slug *string
		var known, parentKnown bool
		err = s.pool.QueryRow(ctx, agentNoteTarget, args[:7]...).Scan(&workspaceID, &sessionID, &role, &name, &slug, &known, &parentKnown)
		switch {
		case err != nil:
			return nil, false, wrap("post note", err)
		case name == nil || slug == nil: // claiming first is the fix, also when not invited
			return nil, false, wrap("post note", ErrNoProfile)
		case role == nil:
			return nil, false, wrap("post note", ErrForbidden)
		case in.To != "" && in.To == *slug:
			return nil, false, wrap("post note", ErrReplyToSelf)
		case !known:
			return nil, false, wrap("post note", ErrNoSuchSender)
		case !parentKnown:
			return nil, false, wrap("post note", ErrNoSuchParent)
		}
		first, err := scanNote(s.pool.QueryRow(ctx, `SELECT `+noteColumns+` FROM notes n
			WHERE n.sender_connection_id = $1 AND n.idempotency_key = $2`, in.ConnectionID, in.IdempotencyKey))
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, false, wrap("post note: load first note", err)
		}
		if first.SessionID != sessionID || first.MessageType != in.messageType() || !sameRecipient(first.RecipientSlug, in.To) ||
			first.Subject != in.Subject || first.Body != in.Body || derefOr(first.InReplyTo, 0) != in.InReplyTo {
			return nil, false, in.keyReused()
		}
		if in.Question != nil {
			same, err := s.sameQuestion(ctx, first.ID, in.Question)
			if err != nil {
				return nil, false, wrap("post note: load first question", err)
			}
			if !same {
				return nil, false, ErrQuestionKeyReused
			}
		}
		return first, true, nil
	}
	return nil, false, wrap("post note", ErrNotFound)
}

// sameRecipient reports whether a note's recipient (nil: the whole session)
// is to ("" for the whole session).
func sameRecipient(recipient *string, to string) bool {
	if recipient == nil {
		return to == ""
	}
	return *recipient == to
}

// derefOr is *p, or def when p is nil.
func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
