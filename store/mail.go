package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// MailPageSize is how many notes the session page shows before "older notes".
const MailPageSize = 50

// maxMailAfter bounds the rows one poll returns; a page far behind reloads.
const maxMailAfter = 200

// Queries of one session's notes name the session with inSession and order
// by (session_id, id DESC), the order of notes_session_idx, so that every
// plan, generic ones included, reads that index rather than walking all notes
// by id. A page's upper bound is always "id < $n" (pageBefore), never
// "($n = 0 OR id < $n)", which no plan can use as an index bound.

// inSession is the condition "n.session_id is the session id", written as a
// range: with "=", PostgreSQL takes session_id for a constant, drops it from
// the ORDER BY, and may then walk the primary key backwards through every
// newer note of every other session (it expects a session's notes spread
// evenly over all ids), which for a quiet session among busy ones reads all
// their notes to find ten. The range keeps session_id in the order, which
// only notes_session_idx provides. id is an SQL expression.
func inSession(id string) string {
	return `n.session_id BETWEEN ` + id + ` AND ` + id
}

// pageBefore is the exclusive upper bound of a page of notes: beforeID, or
// no bound (the largest id) when it is 0.
func pageBefore(beforeID int64) int64 {
	if beforeID <= 0 {
		return math.MaxInt64
	}
	return beforeID
}

// ListSessionMail returns a page of a session's Team mail as its owners see
// it (analysis notes included), newest first. With beforeID > 0 only notes
// with a smaller id. It returns at most limit+1 rows so that the caller can
// tell whether an older page exists.
func (s *Store) ListSessionMail(ctx context.Context, workspaceID, sessionID, beforeID int64, limit int) ([]Note, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+listedColumns+` FROM notes n `+listedJoin+`
		WHERE n.workspace_id = $1 AND `+inSession("$2")+` AND n.id < $3
		ORDER BY n.session_id, n.id DESC LIMIT $4`, workspaceID, sessionID, pageBefore(beforeID), limit+1)
	if err != nil {
		return nil, fmt.Errorf("store: list session mail: %w", err)
	}
	return collectListedNotes(rows, "list session mail")
}

// SessionMailAfter returns the notes of a session newer than afterID, newest
// first (at most 200). Within a session, note ids become visible in
// increasing order (insertNote serialises writers), so "id > afterID" never
// skips a note that commits later.
func (s *Store) SessionMailAfter(ctx context.Context, workspaceID, sessionID, afterID int64) ([]Note, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+listedColumns+` FROM notes n `+listedJoin+`
		WHERE n.workspace_id = $1 AND `+inSession("$2")+` AND n.id > $3
		ORDER BY n.session_id, n.id DESC LIMIT $4`, workspaceID, sessionID, afterID, maxMailAfter)
	if err != nil {
		return nil, fmt.Errorf("store: session mail after: %w", err)
	}
	return collectListedNotes(rows, "session mail after")
}

// GetSessionNote returns one note of a session of the workspace.
func (s *Store) GetSessionNote(ctx context.Context, workspaceID, sessionID, noteID int64) (*Note, error) {
	n, err := sessionNote(ctx, s.pool, workspaceID, sessionID, noteID)
	if err != nil {
		return nil, wrap("get note", err)
	}
	return n, nil
}

func sessionNote(ctx context.Context, q queryRower, workspaceID, sessionID, noteID int64) (*Note, error) {
	return scanNote(q.QueryRow(ctx, `
		SELECT `+noteColumns+` FROM notes n WHERE n.workspace_id = $1 AND n.session_id = $2 AND n.id = $3`,
		workspaceID, sessionID, noteID))
}

// ErrNotAnswerable means an owner's reply names a note that is not one of
// the session's.
var ErrNotAnswerable = &FieldError{"reply_to", "you can reply to a note of this session only"}

// ErrRecipientRevoked refuses an owner's reply to an agent whose connection
// was revoked: it can read nothing, as reply_to_sender refuses the same
// target.
var ErrRecipientRevoked = &FieldError{"reply_to", "this agent's connection was revoked, so it cannot read a reply; " +
	"if it signs in again and its owner continues the connection on the consent page, write to it then"}

// ReplyTarget returns the note of the session the owner's reply answers
// (any of its notes); none gives ErrNotAnswerable, and a note whose reply
// would go to an agent whose connection is revoked (ReplyAddress) comes with
// ErrRecipientRevoked. PostOwnerNote checks a reply with it.
func (s *Store) ReplyTarget(ctx context.Context, workspaceID, sessionID, noteID, ownerID int64) (*Note, error) {
	n, err := replyTarget(ctx, s.pool, workspaceID, sessionID, noteID, ownerID)
	if err != nil && err != ErrNotAnswerable && err != ErrRecipientRevoked {
		return nil, fmt.Errorf("store: reply target: %w", err)
	}
	return n, err
}

func replyTarget(ctx context.Context, q queryRower, workspaceID, sessionID, noteID, ownerID int64) (*Note, error) {
	n, err := sessionNote(ctx, q, workspaceID, sessionID, noteID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, ErrNotAnswerable
	case err != nil:
		return nil, err
	}
	_, to := ReplyAddress(n, ownerID)
	if to == nil {
		return n, nil
	}
	if _, isOwner := ParseOwnerSlug(*to); isOwner {
		return n, nil
	}
	var revoked bool
	if err := q.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM connections WHERE workspace_id = $1 AND sender_slug = $2 AND revoked_at IS NOT NULL)`,
		workspaceID, *to).Scan(&revoked); err != nil {
		return nil, err
	}
	if revoked {
		return n, ErrRecipientRevoked
	}
	return n, nil
}

// ReplyAddress is the one rule of where an owner's reply to a note goes, and
// so its message type: a reply to an analysis note is an analysis note
// (owners only, as what it answers); a reply to one's own note goes on to
// whom that note went (to the whole session, a note; to one sender, a
// reply); a reply to anyone else's note goes to its sender. recipient nil
// is the whole session.
func ReplyAddress(parent *Note, ownerID int64) (messageType string, recipient *string) {
	switch {
	case parent.MessageType == MessageAnalysis:
		return MessageAnalysis, nil
	case parent.SentBy(ownerID) && parent.RecipientSlug == nil:
		return MessageNote, nil
	case parent.SentBy(ownerID):
		return MessageReply, parent.RecipientSlug
	}
	return MessageReply, &parent.SenderSlug
}

// MailMarks are the newest note and the newest receipt on an owner's note of
// a session (0 when none): what its Team mail page polls against.
type MailMarks struct {
	Note    int64
	Receipt int64
}

// sessionMailMarksSQL is SessionMailMarks' statement, $1 the session.
var sessionMailMarksSQL = `
		SELECT s.workspace_id, coalesce((SELECT max(n.id) FROM notes n WHERE n.session_id = s.id), 0),
			greatest(coalesce((SELECT max(r.id) FROM note_receipts r WHERE r.session_id = s.id AND r.owner_note), 0),
				coalesce((SELECT max(d.id) FROM note_deliveries d WHERE d.session_id = s.id AND d.owner_note), 0))
		FROM sessions s WHERE s.id = $1`

// SessionMailMarks returns the workspace of a session and its MailMarks.
// Unknown sessions give ErrNotFound.
func (s *Store) SessionMailMarks(ctx context.Context, sessionID int64) (workspaceID int64, m MailMarks, err error) {
	err = s.pool.QueryRow(ctx, sessionMailMarksSQL, sessionID).Scan(&workspaceID, &m.Note, &m.Receipt)
	if err != nil {
		return 0, MailMarks{}, wrap("session mail marks", err)
	}
	return workspaceID, m, nil
}

// LastReadNote returns the id of the newest note the owner has seen in the
// session (0 when never opened).
func (s *Store) LastReadNote(ctx context.Context, ownerID, sessionID int64) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, `
		SELECT coalesce((SELECT last_read_note_id FROM note_reads WHERE owner_id = $1 AND session_id = $2), 0)`,
		ownerID, sessionID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: last read note: %w", err)
	}
	return id, nil
}

// newestNoteAt is the time of the newest note of the session the SQL
// expression session names (NULL when it has none): the note with the
// largest id, one probe of notes_session_idx. (The largest created_at
// would read every note of the session: no index orders them by time.)
func newestNoteAt(session string) string {
	return `(SELECT n.created_at FROM notes n WHERE ` + inSession(session) + ` ORDER BY n.session_id, n.id DESC LIMIT 1)`
}

// unreadBy is the one rule of what an owner has not read, as a condition on
// notes n of the session the SQL expression session names: newer than the
// owner's read mark there, and not written by the owner. owner is the SQL
// parameter holding the owner id. The bound is a row comparison on
// (session_id, id) with the mark looked up once per session, and the
// session a range (inSession), so that a session's unread notes are a range
// of notes_session_idx: counting or listing them costs what is unread, not
// the session's whole mail.
func unreadBy(owner, session string) string {
	return inSession(session) + ` AND n.sender_owner_id IS DISTINCT FROM ` + owner + `
		AND (n.session_id, n.id) > (` + session + `, coalesce((SELECT r.last_read_note_id FROM note_reads r
			WHERE r.owner_id = ` + owner + ` AND r.session_id = ` + session + `), 0))`
}

// anyUnreadBy is a cheap test that the session may hold notes unreadBy the
// owner: one above the owner's mark there, one index-only probe of
// notes_session_idx, bounded as unreadBy is (the session a range, the mark
// a row comparison: with "id > mark" a plan walked the primary key from the
// mark through every session's notes), and kept a probe per session by
// OFFSET 0 (as a join, a plan may hash every note). The unread counts take it first, so that of a
// workspace's sessions only those with newer notes are counted.
func anyUnreadBy(owner, session string) string {
	return `EXISTS (SELECT 1 FROM notes x WHERE x.session_id BETWEEN ` + session + ` AND ` + session + `
		AND (x.session_id, x.id) > (` + session + `, coalesce((SELECT r.last_read_note_id
		FROM note_reads r WHERE r.owner_id = ` + owner + ` AND r.session_id = ` + session + `), 0)) OFFSET 0)`
}

// SessionUnread is how many notes of one session an owner has not read.
type SessionUnread struct {
	SessionID int64
	ProjectID int64
	Unread    int
	// Inbox counts those of them in the owner's inbox (forOwners), and
	// InboxNewest is the newest of those (0 when none).
	Inbox       int
	InboxNewest int64
}

// unreadMailSQL is UnreadMail's statement, $1 the workspace, $2 the owner.
// Each count is capped (unreadCounted): it reads at most MaxUnreadCounted
// entries of notes_unread_idx per session, however far behind the owner is.
var unreadMailSQL = `
	SELECT s.id, s.project_id, u.count, i.inbox, i.inbox_newest
	FROM sessions s CROSS JOIN LATERAL (` + unreadCounted("$2", "s.id", "true") + `) u
	CROSS JOIN LATERAL (` + unreadCounted("$2", "s.id", forOwners) + `) i(inbox, inbox_newest)
	WHERE s.workspace_id = $1 AND ` + anyUnreadBy("$2", "s.id") + ` AND u.count > 0
	ORDER BY s.id`

// UnreadMail returns the owner's unread count of every session of the
// workspace that has unread notes: what the projects and sessions lists and
// the navigation's inbox count show live.
func (s *Store) UnreadMail(ctx context.Context, workspaceID, ownerID int64) ([]SessionUnread, error) {
	rows, err := s.pool.Query(ctx, unreadMailSQL, workspaceID, ownerID)
	if err != nil {
		return nil, fmt.Errorf("store: unread mail: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SessionUnread, error) {
		var u SessionUnread
		err := r.Scan(&u.SessionID, &u.ProjectID, &u.Unread, &u.Inbox, &u.InboxNewest)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: unread mail: %w", err)
	}
	return out, nil
}

// OwnerSessionUnread is one owner's unread count of one session.
type OwnerSessionUnread struct {
	OwnerID int64
	SessionUnread
}

// unreadMailInSQL is UnreadMailIn's statement, $1 the owners, $2 the
// sessions (all of one workspace), counted as unreadMailSQL counts.
var unreadMailInSQL = `
	SELECT o.id, s.id, s.project_id, u.count, i.inbox, i.inbox_newest
	FROM unnest($1::bigint[]) o(id) CROSS JOIN sessions s
	CROSS JOIN LATERAL (` + unreadCounted("o.id", "s.id", "true") + `) u
	CROSS JOIN LATERAL (` + unreadCounted("o.id", "s.id", forOwners) + `) i(inbox, inbox_newest)
	WHERE s.id = ANY($2) AND ` + anyUnreadBy("o.id", "s.id") + ` AND u.count > 0
	ORDER BY o.id, s.id`

// UnreadMailIn returns, for each of the owners, their unread count of each
// of the sessions that has unread notes (as UnreadMail counts them): what
// the live counts recount when notes arrive in those sessions, in one
// statement for every owner watching, instead of each owner's whole
// workspace.
func (s *Store) UnreadMailIn(ctx context.Context, ownerIDs, sessionIDs []int64) ([]OwnerSessionUnread, error) {
	rows, err := s.pool.Query(ctx, unreadMailInSQL, ownerIDs, sessionIDs)
	if err != nil {
		return nil, fmt.Errorf("store: unread mail in: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (OwnerSessionUnread, error) {
		var u OwnerSessionUnread
		err := r.Scan(&u.OwnerID, &u.SessionID, &u.ProjectID, &u.Unread, &u.Inbox, &u.InboxNewest)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: unread mail in: %w", err)
	}
	return out, nil
}

// OwnerSees reports whether the owner still belongs to the workspace and,
// when sessionID is not 0, whether that session is one of the workspace's:
// what a live stream re-checks while it stays open.
func (s *Store) OwnerSees(ctx context.Context, ownerID, workspaceID, sessionID int64) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM owners o WHERE o.id = $1 AND o.workspace_id = $2)
			AND ($3 = 0 OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = $3 AND s.workspace_id = $2))`,
		ownerID, workspaceID, sessionID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: owner sees: %w", err)
	}
	return ok, nil
}

// MarkMailRead records that the owner has seen the session's notes up to
// noteID and returns the previous mark, in one statement. The mark only
// moves forward; when it does, the statement itself notifies ReadsTopic (the
// owner's unread counts on other pages follow): a notification that depends
// on what the statement decides, allowed inline (notify.go). Its only write
// is the mark: it commits without waiting for the WAL flush
// (readsCommitAsync).
func (s *Store) MarkMailRead(ctx context.Context, ownerID, sessionID, noteID int64) (previous int64, err error) {
	var notified *string
	err = s.pool.QueryRow(ctx, `
		WITH old AS (SELECT coalesce((SELECT last_read_note_id FROM note_reads WHERE owner_id = $1 AND session_id = $2), 0) AS id
			WHERE `+readsCommitAsync+`),
		up AS (
			-- Written only when the mark moves: a page view that moves nothing
			-- writes nothing (not even a row lock) and waits for no WAL flush.
			INSERT INTO note_reads AS r (owner_id, session_id, last_read_note_id)
			SELECT $1, $2, $3::bigint FROM old WHERE $3::bigint > old.id
			ON CONFLICT (owner_id, session_id) DO UPDATE
			SET last_read_note_id = greatest(r.last_read_note_id, EXCLUDED.last_read_note_id)
			WHERE r.last_read_note_id < EXCLUDED.last_read_note_id)
		SELECT old.id, CASE WHEN $3::bigint > old.id THEN pg_notify($4, $1::bigint::text)::text END FROM old`,
		ownerID, sessionID, noteID, ReadsChannel).Scan(&previous, &notified)
	if err != nil {
		return 0, fmt.Errorf("store: mark mail read: %w", err)
	}
	return previous, nil
}

// OwnerNote is the input of PostOwnerNote: a note an owner writes in the web
// app. Type is MessageReply (an answer to the note ReplyTo, addressed as
// ReplyAddress says), MessageNote (to the whole session) or MessageAnalysis
// (owners only).
type OwnerNote struct {
	WorkspaceID int64
	SessionID   int64
	OwnerID     int64
	Type        string
	// ReplyTo is the note of the session a reply answers.
	ReplyTo int64
	Subject string
	Body    string
}

// Validate trims and checks an owner note with the same limits as the tools.
func (o *OwnerNote) Validate() error {
	o.Subject = strings.TrimSpace(o.Subject)
	switch o.Type {
	case MessageReply, MessageNote, MessageAnalysis:
	default:
		return &FieldError{"type", "choose a reply, a note to the whole session or an analysis note"}
	}
	if o.Type == MessageReply && o.ReplyTo <= 0 {
		return &FieldError{"reply_to", "choose the note to reply to"}
	}
	if strings.TrimSpace(o.Body) == "" {
		return &FieldError{"body", "write a message"}
	}
	return checkNoteText(o.Subject, o.Body)
}

// ownerSlugPrefix starts every owner's sender slug: the one definition the
// store's statements are written with too (forOwners; migration 031's
// index predicate spells it as it was then).
const ownerSlugPrefix = "owner-"

// OwnerSlug is an owner's address as a mail sender.
func OwnerSlug(ownerID int64) string { return ownerSlugPrefix + strconv.FormatInt(ownerID, 10) }

// ParseOwnerSlug returns the owner id of an OwnerSlug, and false for any
// other text.
func ParseOwnerSlug(slug string) (int64, bool) {
	digits, ok := strings.CutPrefix(slug, ownerSlugPrefix)
	if !ok || digits == "" || digits[0] == '0' || digits[0] == '+' {
		return 0, false
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

// duplicateWindow is how long an identical note from the same owner counts
// as a second submission of the same form rather than a new message.
const duplicateWindow = "10 seconds"

// duplicateOwnerNoteSQL finds the newest note of session $1 by owner $2
// identical to the one being posted ($3 type, $4 recipient, $5 subject, $6
// body, $8 the note it answers) within the last $7. The owner's notes of the
// window are a range of notes_owner_recent_idx (session, owner, time), read
// first and then ordered, so that no plan walks the session's notes newest
// first filtering on created_at, which reads the whole session when there is
// no such note (the usual case) while the session's lock is held.
var duplicateOwnerNoteSQL = `
	WITH recent AS MATERIALIZED (
		SELECT n.* FROM notes n
		WHERE n.session_id = $1 AND n.sender_owner_id = $2 AND n.sender_kind = 'owner' AND n.created_at > now() - $7::interval
	)
	SELECT ` + noteColumns + ` FROM recent n
	WHERE n.message_type = $3 AND n.recipient_slug IS NOT DISTINCT FROM $4 AND n.subject = $5 AND n.body = $6
		AND n.in_reply_to IS NOT DISTINCT FROM $8
	ORDER BY n.id DESC LIMIT 1`

// PostOwnerNote adds an owner's note to a session of the workspace, with its
// resource event and change notification, in one transaction; the owner's
// role must write (member or admin, *RoleError otherwise). A reply
// records the note it answers and goes where ReplyAddress says. The session row is locked
// first, which serialises the session's writers: an identical note from the
// same owner within a few seconds (a double submit, possibly on another
// replica) returns the first one with duplicate true instead of a second row.
func (s *Store) PostOwnerNote(ctx context.Context, in OwnerNote) (note *Note, duplicate bool, err error) {
	if err := in.Validate(); err != nil {
		return nil, false, err
	}
	var announced []notification
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, _, err := checkRole(ctx, tx, in.WorkspaceID, in.OwnerID, RoleMember); err != nil {
			return err
		}
		var ownerName string
		if err := tx.QueryRow(ctx, `
			SELECT o.display_name FROM sessions s JOIN owners o ON o.workspace_id = s.workspace_id AND o.id = $3
			WHERE s.workspace_id = $1 AND s.id = $2 FOR NO KEY UPDATE OF s`,
			in.WorkspaceID, in.SessionID, in.OwnerID).Scan(&ownerName); err != nil {
			return err
		}
		n := &Note{WorkspaceID: in.WorkspaceID, SessionID: in.SessionID, SenderKind: SenderOwner, SenderOwnerID: &in.OwnerID,
			SenderSlug: OwnerSlug(in.OwnerID), SenderName: ownerName, MessageType: in.Type, Subject: in.Subject, Body: in.Body}
		if in.Type == MessageReply {
			target, err := replyTarget(ctx, tx, in.WorkspaceID, in.SessionID, in.ReplyTo, in.OwnerID)
			if err != nil {
				return err
			}
			n.MessageType, n.RecipientSlug = ReplyAddress(target, in.OwnerID)
			n.InReplyTo = &target.ID
		}
		first, err := scanNote(tx.QueryRow(ctx, duplicateOwnerNoteSQL, in.SessionID, in.OwnerID, n.MessageType, n.RecipientSlug, in.Subject, in.Body,
			duplicateWindow, n.InReplyTo))
		switch {
		case err == nil:
			note, duplicate = first, true
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		note, announced, err = insertNote(ctx, tx, n)
		return err
	})
	if err == nil {
		s.notifyAfterCommit(announced...)
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return nil, false, fe
	}
	if err != nil {
		return nil, false, wrapAct("post owner note", err)
	}
	return note, duplicate, nil
}
