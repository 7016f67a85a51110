package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Answer is an owner's answer to a question: one of its options (Option,
// its index), or free text in the owner's own words (also to a question
// with options: none of them may be right).
type Answer struct {
	WorkspaceID int64
	OwnerID     int64
	QuestionID  int64
	// SessionID, when not 0, is the session the question must be of (the
	// page it was answered on).
	SessionID int64
	// Option is the index of the option chosen; nil for a free-text answer.
	Option *int
	Text   string
	// RemoteAddr and UserAgent are where the answer came from, for the
	// audit log.
	RemoteAddr, UserAgent string
}

// ErrClosed is the refusal of an answer to a question that is no longer open.
type ErrClosed struct{ Question *Question }

func (e *ErrClosed) Error() string {
	if e.Question.State == QuestionAnswered {
		return fmt.Sprintf("%s answered this question already: %s", e.Question.AnsweredBy, e.Question.Answer)
	}
	return "this question expired without an answer; the agent was told there was no decision"
}

// AnswerQuestion records an owner's answer to an open question of the workspace, as a reply to the
// agent. One conditional UPDATE decides, so of two owners at once exactly one wins and the other
// gets *ErrClosed.
func (s *Store) AnswerQuestion(ctx context.Context, in Answer) (*Question, error) {
	return s.answer(ctx, in, 0)
}

func (s *Store) answer(ctx context.Context, in Answer, link int64) (*Question, error) {
	text := strings.TrimSpace(in.Text)
	if in.Option == nil {
		switch {
		case text == "":
			return nil, &FieldError{"answer", "write an answer"}
		case utf8.RuneCountInString(text) > MaxAnswerLen:
			return nil, &FieldError{"answer", fmt.Sprintf("use at most %d characters", MaxAnswerLen)}
		}
	}
	var q *Question
	var announced []notification
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, _, err := checkRole(ctx, tx, in.WorkspaceID, in.OwnerID, RoleMember); err != nil {
			return err
		}
		// The one statement that decides: it answers only an open question,
		// and names the option by its index in the question's own list.
		var ownerName string
		var agentSlug string
		err := tx.QueryRow(ctx, `
			UPDATE questions q SET state = 'answered', answer = CASE WHEN $4::int IS NULL THEN $5 ELSE q.options[$4::int + 1] END,
				answered_by = o.id, answered_by_name = o.display_name, closed_at = now(), timer = 'done', due_at = NULL
			FROM owners o, connections c
			WHERE q.note_id = $1 AND q.workspace_id = $2 AND q.state = 'open' AND ($6::bigint = 0 OR q.session_id = $6)
				AND o.id = $3 AND o.workspace_id = q.workspace_id AND c.id = q.connection_id
				AND ($4::int IS NULL OR ($4::int >= 0 AND $4::int < cardinality(q.options)))
			RETURNING o.display_name, c.sender_slug`, in.QuestionID, in.WorkspaceID, in.OwnerID, in.Option, text, in.SessionID).Scan(&ownerName, &agentSlug)
		if errors.Is(err, pgx.ErrNoRows) {
			return s.whyNotAnswered(ctx, tx, in)
		}
		if err != nil {
			return err
		}
		if link != 0 {
			tag, err := tx.Exec(ctx, `UPDATE answer_links SET used_at = now()
				WHERE id = $1 AND used_at IS NULL AND expires_at > now() AND question_id = $2 AND owner_id = $3`, link, in.QuestionID, in.OwnerID)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 1 {
				return ErrLinkSpent
			}
		}
		q, err = scanQuestion(tx.QueryRow(ctx, questionSelect+`
			FROM questions q JOIN notes n ON n.id = q.note_id WHERE q.note_id = $1`, in.QuestionID))
		if err != nil {
			return err
		}
		reply, ann, err := insertNote(ctx, tx, &Note{WorkspaceID: in.WorkspaceID, SessionID: q.SessionID, SenderKind: SenderOwner,
			SenderOwnerID: &in.OwnerID, SenderSlug: OwnerSlug(in.OwnerID), SenderName: ownerName, RecipientSlug: &agentSlug,
			MessageType: MessageReply, Body: q.Answer, InReplyTo: &q.ID})
		if err != nil {
			return err
		}
		announced = ann
		if err := closeQuestion(ctx, tx, q, reply.ID, "question_answered", map[string]any{
			"question_id": q.ID, "answer_note_id": reply.ID, "answer": q.Answer, "answered_by": q.AnsweredBy,
		}); err != nil {
			return err
		}
		var projectID int64
		if err := tx.QueryRow(ctx, `SELECT project_id FROM sessions WHERE id = $1`, q.SessionID).Scan(&projectID); err != nil {
			return err
		}
		by := Actor{OwnerID: in.OwnerID, WorkspaceID: in.WorkspaceID, RemoteAddr: in.RemoteAddr, UserAgent: in.UserAgent}
		return insertAudit(ctx, tx, by, ownerName, AuditEntry{Kind: AuditQuestionAnswer, ProjectID: &projectID,
			Subject: shorten(q.Answer, 300), Detail: map[string]any{"question_id": q.ID, "session_id": q.SessionID, "by_link": link != 0}})
	})
	if err != nil {
		var closed *ErrClosed
		var fe *FieldError
		var re *RoleError
		if errors.As(err, &closed) || errors.As(err, &fe) || errors.Is(err, ErrNotFound) || errors.As(err, &re) {
			return nil, err
		}
		return nil, wrap("answer question", err)
	}
	s.notifyAfterCommit(append(announced, QuestionTopic.notification(NoteRef{SessionID: q.SessionID, NoteID: q.ID}))...)
	return q, nil
}

func closeQuestion(ctx context.Context, tx pgx.Tx, q *Question, noteID int64, kind string, payload map[string]any) error {
	if _, err := tx.Exec(ctx, `UPDATE questions SET closing_note_id = $2 WHERE note_id = $1`, q.ID, noteID); err != nil {
		return err
	}
	_, err := appendEvent(ctx, tx, q.SessionID, kind, &q.ID, payload)
	return err
}

func (s *Store) whyNotAnswered(ctx context.Context, tx pgx.Tx, in Answer) error {
	q, err := scanQuestion(tx.QueryRow(ctx, questionSelect+`
		FROM questions q JOIN notes n ON n.id = q.note_id
		WHERE q.note_id = $1 AND q.workspace_id = $2 AND ($4::bigint = 0 OR q.session_id = $4)
			AND EXISTS (SELECT 1 FROM owners o WHERE o.id = $3 AND o.workspace_id = q.workspace_id)`,
		in.QuestionID, in.WorkspaceID, in.OwnerID, in.SessionID))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("store: answer question: %w", ErrNotFound)
	case err != nil:
		return err
	case !q.Open():
		return &ErrClosed{Question: q}
	}
	return &FieldError{"answer", "that is not one of this question's options"}
}
