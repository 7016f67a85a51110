package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DueQuestion is a question whose timer fires, with what its notice says.
type DueQuestion struct {
	Question
	// Timer is the timer that fires: "notice", "reminder" or "expiry".
	Timer        string
	SessionTitle string
	SessionType  string
	PublicID     string
	ProjectID    int64
	ProjectName  string
	// AskerName and AskerSlug are the agent that asked.
	AskerName string
	AskerSlug string
}

// Reminder reports whether the timer is the reminder.
func (d *DueQuestion) Reminder() bool { return d.Timer == "reminder" }

var dueQuestionSelect = questionSelect + `, q.timer, s.title, s.session_type, s.public_id, p.id, p.name, n.sender_name, n.sender_slug
	FROM questions q JOIN notes n ON n.id = q.note_id
	JOIN sessions s ON s.id = q.session_id
	JOIN projects p ON p.id = s.project_id`

func scanDueQuestion(r pgx.Row, d *DueQuestion) error {
	var text string
	var q nullableQuestion
	err := r.Scan(append(append([]any{&text}, q.targets()...), &d.Timer, &d.SessionTitle, &d.SessionType, &d.PublicID,
		&d.ProjectID, &d.ProjectName, &d.AskerName, &d.AskerSlug)...)
	if err == nil {
		d.Question = *q.question()
		d.Text = text
	}
	return err
}

// TimerResult is what one FireQuestionTimers call did.
type TimerResult struct {
	// Fired counts the timers that fired; Deliveries and Mails what they queued.
	Fired, Deliveries, Mails, Expired int
}

const expiryNotice = "No decision: nobody answered this question before it expired. " +
	"Treat it as undecided, not as consent; ask again with ask_owner if it still matters."

// FireQuestionTimers fires up to limit due question timers, in one transaction. Due rows are
// claimed with FOR UPDATE SKIP LOCKED and all their work is done while the lock is held, so each
// timer fires once, on one replica, also across crashes.
func (s *Store) FireQuestionTimers(ctx context.Context, limit int, compose ComposeQuestionEmail) (TimerResult, error) {
	var res TimerResult
	var announced []notification
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			WITH due AS (
				SELECT note_id FROM questions
				WHERE timer <> 'done' AND due_at <= now()
				ORDER BY due_at LIMIT $1
				FOR UPDATE SKIP LOCKED
			)
			`+dueQuestionSelect+` WHERE q.note_id IN (SELECT note_id FROM due)
			ORDER BY q.due_at`, limit)
		if err != nil {
			return err
		}
		due, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DueQuestion, error) {
			var d DueQuestion
			err := scanDueQuestion(r, &d)
			return d, err
		})
		if err != nil {
			return err
		}
		for i := range due {
			d := &due[i]
			res.Fired++
			switch d.Timer {
			case "notice", "reminder":
				n, m, err := s.reachOwners(ctx, tx, d, compose)
				if err != nil {
					return err
				}
				res.Deliveries += n
				res.Mails += m
				next, nextAt := "reminder", `now() + (expires_at - now()) / 2`
				if d.Reminder() {
					next, nextAt = "expiry", `expires_at`
				}
				if _, err := tx.Exec(ctx, `UPDATE questions SET timer = $2, due_at = `+nextAt+` WHERE note_id = $1`, d.ID, next); err != nil {
					return err
				}
			case "expiry":
				ann, err := expire(ctx, tx, d)
				if err != nil {
					return err
				}
				announced = append(announced, ann...)
				res.Expired++
			}
		}
		return nil
	})
	if err != nil {
		return TimerResult{}, fmt.Errorf("store: fire question timers: %w", err)
	}
	if res.Deliveries > 0 {
		announced = append(announced, WebhookTopic.notification(struct{}{}))
	}
	if res.Mails > 0 {
		announced = append(announced, EmailTopic.notification(struct{}{}))
	}
	s.notifyAfterCommit(announced...)
	return res, nil
}

func (s *Store) reachOwners(ctx context.Context, tx pgx.Tx, d *DueQuestion, compose ComposeQuestionEmail) (deliveries, mails int, err error) {
	event := "question"
	if d.Reminder() {
		event = "reminder"
	}
	tag, err := tx.Exec(ctx, `
		INSERT INTO webhook_deliveries (endpoint_id, note_id, event)
		SELECT e.id, $2, $3 FROM webhook_endpoints e WHERE e.project_id = $1 AND e.enabled`, d.ProjectID, d.ID, event)
	if err != nil {
		return 0, 0, fmt.Errorf("queue question webhooks: %w", err)
	}
	deliveries = int(tag.RowsAffected())
	if compose == nil {
		return deliveries, 0, nil
	}
	rows, err := tx.Query(ctx, questionEmailTo, d.WorkspaceID)
	if err != nil {
		return 0, 0, err
	}
	owners, err := pgx.CollectRows(rows, pgx.RowToStructByPos[EmailTo])
	if err != nil {
		return 0, 0, err
	}
	for _, to := range owners {
		if err := s.queueQuestionEmail(ctx, tx, to, d, compose); err != nil {
			return 0, 0, fmt.Errorf("queue question mail: %w", err)
		}
		mails++
	}
	return deliveries, mails, nil
}

// expire ends an open question as expired inside tx (the row is locked, and the expiry is the last
// timer of an open one).
func expire(ctx context.Context, tx pgx.Tx, d *DueQuestion) ([]notification, error) {
	if _, err := tx.Exec(ctx, `UPDATE questions SET state = 'expired', closed_at = now(), timer = 'done', due_at = NULL
		WHERE note_id = $1 AND state = 'open'`, d.ID); err != nil {
		return nil, err
	}
	to := d.AskerSlug
	notice, announced, err := insertNote(ctx, tx, &Note{WorkspaceID: d.WorkspaceID, SessionID: d.SessionID, SenderKind: SenderSystem,
		SenderSlug: SystemSlug, SenderName: SystemName, RecipientSlug: &to, MessageType: MessageReply, Body: expiryNotice, InReplyTo: &d.ID})
	if err != nil {
		return nil, err
	}
	if err := closeQuestion(ctx, tx, &d.Question, notice.ID, "question_expired", map[string]any{
		"question_id": d.ID, "notice_note_id": notice.ID,
	}); err != nil {
		return nil, err
	}
	return append(announced, QuestionTopic.notification(NoteRef{SessionID: d.SessionID, NoteID: d.ID})), nil
}

// NextQuestionTimer returns how long until the soonest pending question
// timer is due, by the database's clock (0 when one is due now), and false
// when none is pending.
func (s *Store) NextQuestionTimer(ctx context.Context) (time.Duration, bool, error) {
	var ms *float64
	if err := s.pool.QueryRow(ctx, `SELECT extract(epoch FROM min(due_at) - now()) * 1000 FROM questions WHERE timer <> 'done'`).
		Scan(&ms); err != nil {
		return 0, false, fmt.Errorf("store: next question timer: %w", err)
	}
	if ms == nil {
		return 0, false, nil
	}
	return max(time.Duration(*ms*float64(time.Millisecond)), 0), true, nil
}
