package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

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

func agentNoteWriteSQL(extra ...string) string {
	return noteWriteSQL(`target AS (`+agentNoteTarget+`
	), `+writeBucket("$11", "$12")+`, src AS (
		SELECT t.workspace_id, t.id AS session_id, 'agent'::text AS sender_kind, NULL::bigint AS sender_owner_id,
			$2::bigint AS sender_connection_id, t.sender_slug, t.display_name AS sender_name,
			NULLIF($5::text, '') AS recipient_slug, $8::text AS message_type, $9::text AS subject, $10::text AS body,
			$11::text AS idempotency_key, NULLIF($7::bigint, 0) AS in_reply_to
		FROM target t
		WHERE t.role IS NOT NULL AND t.display_name IS NOT NULL AND t.sender_slug IS NOT NULL
			AND t.sender_slug <> $5::text AND t.known AND t.parent_known AND `+granted+`)`, onKeyConflict, extra...)
}

var agentNoteSQL = agentNoteWriteSQL()

// AgentNote is the input of PostAgentNote: a note from a connection's agent
// in a session addressed by the (type, public id) agents use, to the whole
// session or, as a reply, to one sender.
type AgentNote struct {
	WorkspaceID  int64
	ConnectionID int64
	SessionType  string
	SessionID    string
	// To is the sender slug a reply goes to (reply_to_sender).
	To string
	// InReplyTo is the note of the session the reply answers (0: none).
	InReplyTo      int64
	Subject        string
	Body           string
	IdempotencyKey string
	// Question makes the note a question to the session's owners (MessageQuestion, ask_owner).
	Question *QuestionAsk
}

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

// ErrKeyReused means an idempotency key was sent again with a different session, recipient, subject
// or body (or by the other of the two posting tools).
var ErrKeyReused = &FieldError{"idempotency_key", "already used for a different note; send the same session, recipient, subject and body to retry, or use a new key for a new note"}

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

// PostAgentNote adds a note from the connection's agent, to the whole session or as a reply to
// in.To, with its resource event and webhook deliveries, in one statement that also checks the
// caller may (agentNoteSQL).
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
		// Nothing written: refused, the key used before (possibly by a retry
		// committed a moment ago; the insert waited for it), or past the
		// write limit, which a retry of a written key never is.
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
			if err := s.writeRefused(ctx, in.ConnectionID); err != nil {
				var wl *WriteLimited
				if errors.As(err, &wl) {
					return nil, false, err
				}
				return nil, false, wrap("post note", err)
			}
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

func sameRecipient(recipient *string, to string) bool {
	if recipient == nil {
		return to == ""
	}
	return *recipient == to
}

func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
