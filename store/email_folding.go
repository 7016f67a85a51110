package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// EmailFoldWindow is the least time between two question emails to an
// owner: at most three a minute.
const EmailFoldWindow = 20 * time.Second

func (s *Store) foldWindow() time.Duration {
	return time.Duration(float64(EmailFoldWindow) * s.questionMinute.Seconds() / 60)
}

// QuestionEmailItem is one question of a question email, with the tokens of
// its answer links to the owner (one per option, then one for an answer in
// the owner's own words).
type QuestionEmailItem struct {
	*DueQuestion
	Links []string
}

// ComposeQuestionEmail composes a question email to an owner: one question's
// notice or reminder, or several folded into one message.
type ComposeQuestionEmail func(to EmailTo, items []QuestionEmailItem) (Email, error)

// queueQuestionEmail queues d's notice or reminder to an owner, folded into
// the owner's question email not yet claimed when there is one (its row
// locked, so a sender claiming it waits, or is waited for and then skipped).
func (s *Store) queueQuestionEmail(ctx context.Context, tx pgx.Tx, to EmailTo, d *DueQuestion, compose ComposeQuestionEmail) error {
	kind := EmailQuestion
	if d.Reminder() {
		kind = EmailReminder
	}
	var mailID int64
	var ids []int64
	err := tx.QueryRow(ctx, `
		SELECT id, question_ids FROM mail_outbox
		WHERE owner_id = $1 AND kind IN ('question', 'reminder') AND state = 'pending' AND attempts = 0 AND claimed_until IS NULL
		ORDER BY id DESC LIMIT 1
		FOR UPDATE`, to.OwnerID).Scan(&mailID, &ids)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if !slices.Contains(ids, d.ID) {
		ids = append(ids, d.ID)
	}
	items, err := s.questionEmailItems(ctx, tx, to, ids, d)
	if err != nil {
		return err
	}
	m, err := compose(to, items)
	if err != nil {
		return err
	}
	if mailID != 0 {
		_, err = tx.Exec(ctx, `UPDATE mail_outbox SET question_ids = $2, subject = $3, text_body = $4, html_body = $5,
			kind = CASE WHEN kind = 'question' OR $6 = 'question' THEN 'question' ELSE 'reminder' END
			WHERE id = $1`, mailID, ids, emailSubject(m.Subject), m.Text, m.HTML, kind)
		return err
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO mail_outbox (workspace_id, owner_id, kind, note_id, question_ids, subject, text_body, html_body, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, greatest(now(),
			(SELECT max(created_at) FROM mail_outbox WHERE owner_id = $2 AND kind IN ('question', 'reminder')) + $9 * interval '1 millisecond'))`,
		to.WorkspaceID, to.OwnerID, kind, d.ID, ids, emailSubject(m.Subject), m.Text, m.HTML, s.foldWindow().Milliseconds())
	return err
}

// questionEmailItems are the questions ids of a question email that are still open, d (the one that
// fires now) as it is, each with fresh answer links for the owner.
func (s *Store) questionEmailItems(ctx context.Context, tx pgx.Tx, to EmailTo, ids []int64, d *DueQuestion) ([]QuestionEmailItem, error) {
	rows, err := tx.Query(ctx, dueQuestionSelect+` WHERE q.note_id = ANY($1) AND q.note_id <> $2 AND q.state = 'open'`, ids, d.ID)
	if err != nil {
		return nil, err
	}
	byID := map[int64]*DueQuestion{d.ID: d}
	for rows.Next() {
		var dq DueQuestion
		if err := scanDueQuestion(rows, &dq); err != nil {
			rows.Close()
			return nil, err
		}
		// Its timer moved on when its notice or reminder fired.
		dq.Timer = map[string]string{"reminder": "notice", "expiry": "reminder"}[dq.Timer]
		byID[dq.ID] = &dq
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var items []QuestionEmailItem
	for _, id := range ids {
		q := byID[id]
		if q == nil {
			continue
		}
		links, err := s.createAnswerLinks(ctx, tx, &q.Question, to.OwnerID)
		if err != nil {
			return nil, err
		}
		items = append(items, QuestionEmailItem{DueQuestion: q, Links: links})
	}
	return items, nil
}

func emailSubject(subject string) string {
	if r := []rune(subject); len(r) > 300 {
		return string(r[:299]) + "…"
	}
	return subject
}
