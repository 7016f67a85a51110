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

// ErrRecipientRevoked refuses an owner's reply to an agent whose connection was revoked.
var ErrRecipientRevoked = &FieldError{"reply_to", "this agent's connection was revoked, so it cannot read a reply; " +
	"if it signs in again and its owner continues the connection on the consent page, write to it then"}

// ReplyTarget returns the note of the session the owner's reply answers (any of its notes).
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

// ReplyAddress is the one rule of where an owner's reply to a note goes, and so its message type.
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

// OwnerNote is the input of PostOwnerNote: a note an owner writes in the web app.
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

const duplicateWindow = "10 seconds"

// duplicateOwnerNoteSQL finds the owner's identical note within the interval $7, read as a range of
// notes_owner_recent_idx (docs/performance.md).
var duplicateOwnerNoteSQL = `
	WITH recent AS MATERIALIZED (
		SELECT n.* FROM notes n
		WHERE n.session_id = $1 AND n.sender_owner_id = $2 AND n.sender_kind = 'owner' AND n.created_at > now() - $7::interval
	)
	SELECT ` + noteColumns + ` FROM recent n
	WHERE n.message_type = $3 AND n.recipient_slug IS NOT DISTINCT FROM $4 AND n.subject = $5 AND n.body = $6
		AND n.in_reply_to IS NOT DISTINCT FROM $8
	ORDER BY n.id DESC LIMIT 1`

// PostOwnerNote adds an owner's note to a session of the workspace, with its event and
// notification, in one transaction. The session row is locked first, so a double submit (maybe on
// another replica) returns the first note with duplicate true.
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
