package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

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
