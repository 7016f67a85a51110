package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Kinds of email.
const (
	EmailQuestion = "question"
	EmailReminder = "reminder"
	EmailReply    = "reply"
	EmailDigest   = "digest"
)

// Email states.
const (
	EmailPending = "pending"
	EmailSent    = "sent"
	EmailFailed  = "failed"
	// EmailSkipped: a question's email not sent because the question was
	// answered or expired before it went out.
	EmailSkipped = "skipped"
)

// Email is one message as composed: a subject, and a body in plain text and
// in HTML.
type Email struct {
	Subject string
	Text    string
	HTML    string
}

// EmailTo is an owner a message goes to.
type EmailTo struct {
	OwnerID     int64
	WorkspaceID int64
	Email       string
	Name        string
}

func insertEmail(ctx context.Context, tx pgx.Tx, to EmailTo, kind string, noteID int64, m Email) error {
	var note *int64
	if noteID != 0 {
		note = &noteID
	}
	subject := emailSubject(m.Subject)
	_, err := tx.Exec(ctx, `
		INSERT INTO mail_outbox (workspace_id, owner_id, kind, note_id, subject, text_body, html_body)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, to.WorkspaceID, to.OwnerID, kind, note, subject, m.Text, m.HTML)
	if err != nil {
		return fmt.Errorf("queue mail: %w", err)
	}
	return nil
}

// OutgoingEmail is a claimed message of the outbox.
type OutgoingEmail struct {
	ID int64
	// Attempt is this attempt's number; it fences the result as a webhook
	// attempt's does.
	Attempt   int
	CreatedAt time.Time
	Kind      string
	To        EmailTo
	// Stale: the questions the email asks were answered or expired since it was queued.
	Stale bool
	Email
}

// ClaimEmails claims up to limit due messages for lease, skipping those another claim holds (FOR
// UPDATE SKIP LOCKED), so replicas never send one message twice at once.
func (s *Store) ClaimEmails(ctx context.Context, limit int, lease time.Duration, except []int64) ([]OutgoingEmail, error) {
	if except == nil {
		except = []int64{}
	}
	rows, err := s.pool.Query(ctx, `
		WITH due AS (
			SELECT m.id FROM mail_outbox m
			WHERE m.state = 'pending' AND m.next_attempt_at <= now()
				AND (m.claimed_until IS NULL OR m.claimed_until <= now()) AND m.id <> ALL($3)
			ORDER BY m.next_attempt_at, m.id
			LIMIT $1
			FOR UPDATE SKIP LOCKED
		)
		UPDATE mail_outbox m SET attempts = m.attempts + 1, claimed_until = now() + $2 * interval '1 millisecond'
		FROM due, owners o
		WHERE m.id = due.id AND o.id = m.owner_id
		RETURNING m.id, m.attempts, m.created_at, m.kind, m.owner_id, m.workspace_id, o.email, o.display_name,
			m.kind IN ('question', 'reminder') AND NOT EXISTS (SELECT 1 FROM questions q
				WHERE q.note_id = ANY(coalesce(m.question_ids, ARRAY[m.note_id])) AND q.state = 'open'),
			m.subject, m.text_body, m.html_body`, limit, lease.Milliseconds(), except)
	if err != nil {
		return nil, fmt.Errorf("store: claim mails: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (OutgoingEmail, error) {
		var m OutgoingEmail
		err := r.Scan(&m.ID, &m.Attempt, &m.CreatedAt, &m.Kind, &m.To.OwnerID, &m.To.WorkspaceID, &m.To.Email, &m.To.Name,
			&m.Stale, &m.Subject, &m.Text, &m.HTML)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim mails: %w", err)
	}
	return out, nil
}

// FinishEmail records attempt number attempt of a message.
func (s *Store) FinishEmail(ctx context.Context, id int64, attempt int, state string, retryIn time.Duration, errText string) (bool, error) {
	var msg *string
	if errText != "" {
		if r := []rune(errText); len(r) > 300 {
			errText = string(r[:299]) + "…"
		}
		msg = &errText
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE mail_outbox SET state = $3, claimed_until = NULL, last_error = $4,
			next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + $5 * interval '1 millisecond' ELSE next_attempt_at END,
			finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
		WHERE id = $1 AND attempts = $2 AND state = 'pending' AND claimed_until IS NOT NULL`,
		id, attempt, state, msg, retryIn.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("store: finish mail: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// EmailOutboxDepth is what the email outbox holds, for the metrics.
type EmailOutboxDepth struct {
	// Pending counts messages not yet sent, failed or skipped.
	Pending int64
	// Due counts those that may be sent now and no sender holds.
	Due          int64
	OldestDueAge time.Duration
	// Failed counts messages given up on, kept for EmailRetention.
	Failed int64
}

// EmailOutboxDepth measures the email outbox in one statement.
func (s *Store) EmailOutboxDepth(ctx context.Context) (EmailOutboxDepth, error) {
	var d EmailOutboxDepth
	var ageMS float64
	err := s.pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE state = 'pending'),
			count(*) FILTER (WHERE due),
			coalesce(extract(epoch FROM now() - min(next_attempt_at) FILTER (WHERE due)) * 1000, 0),
			count(*) FILTER (WHERE state = 'failed')
		FROM (SELECT state, next_attempt_at,
				state = 'pending' AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until <= now()) AS due
			FROM mail_outbox) m`).Scan(&d.Pending, &d.Due, &ageMS, &d.Failed)
	if err != nil {
		return d, fmt.Errorf("store: mail outbox depth: %w", err)
	}
	d.OldestDueAge = time.Duration(ageMS * float64(time.Millisecond))
	return d, nil
}

// EmailRetention is how long sent and failed messages stay in the outbox.
const EmailRetention = 7 * 24 * time.Hour

// PruneEmails deletes the messages that finished more than EmailRetention ago.
func (s *Store) PruneEmails(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM mail_outbox WHERE state <> 'pending' AND finished_at < now() - $1 * interval '1 millisecond'`,
		EmailRetention.Milliseconds())
	if err != nil {
		return 0, fmt.Errorf("store: prune mails: %w", err)
	}
	return tag.RowsAffected(), nil
}

// EmailSettings are what an owner wants emailed.
type EmailSettings struct {
	Questions bool
	Replies   bool
	Digest    bool
}

// DefaultEmailSettings are an owner's until they choose.
var DefaultEmailSettings = EmailSettings{Questions: true}

// EmailSettingsOf returns the owner's email settings.
func (s *Store) EmailSettingsOf(ctx context.Context, ownerID int64) (EmailSettings, error) {
	m := DefaultEmailSettings
	err := s.pool.QueryRow(ctx, `SELECT questions, replies, digest FROM owner_mail_settings WHERE owner_id = $1`, ownerID).
		Scan(&m.Questions, &m.Replies, &m.Digest)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return m, fmt.Errorf("store: mail settings: %w", err)
	}
	return m, nil
}

// DigestInterval is how often the digest goes out.
const DigestInterval = 24 * time.Hour

// SetEmailSettings records the owner's email settings, in one statement.
func (s *Store) SetEmailSettings(ctx context.Context, workspaceID, ownerID int64, m EmailSettings) error {
	return s.setEmailSettingsIn(ctx, s.pool, workspaceID, ownerID, m)
}

func (s *Store) setEmailSettingsIn(ctx context.Context, q querier, workspaceID, ownerID int64, m EmailSettings) error {
	tag, err := q.Exec(ctx, `
		INSERT INTO owner_mail_settings AS ms (owner_id, workspace_id, questions, replies, digest, replies_through, digest_due_at)
		SELECT o.id, o.workspace_id, $3, $4, $5,
			coalesce((SELECT max(n.id) FROM notes n), 0),
			CASE WHEN $5 THEN now() + $6 * interval '1 millisecond' END
		FROM owners o WHERE o.id = $2 AND o.workspace_id = $1
		ON CONFLICT (owner_id) DO UPDATE SET questions = EXCLUDED.questions, replies = EXCLUDED.replies, digest = EXCLUDED.digest,
			replies_through = CASE WHEN ms.replies THEN ms.replies_through ELSE EXCLUDED.replies_through END,
			digest_due_at = CASE WHEN NOT EXCLUDED.digest THEN NULL WHEN ms.digest THEN ms.digest_due_at ELSE EXCLUDED.digest_due_at END`,
		workspaceID, ownerID, m.Questions, m.Replies, m.Digest, DigestInterval.Milliseconds())
	if err != nil {
		return fmt.Errorf("store: set mail settings: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: set mail settings: %w", ErrNotFound)
	}
	return nil
}

const questionEmailTo = `
	SELECT o.id, o.workspace_id, o.email, o.display_name FROM owners o
	LEFT JOIN owner_mail_settings ms ON ms.owner_id = o.id
	WHERE o.workspace_id = $1 AND coalesce(ms.questions, true) AND o.removed_at IS NULL AND o.role <> 'viewer'
	ORDER BY o.id`

// ReplyToEmail is a reply to an owner the reply sweep emails, with where it is.
type ReplyToEmail struct {
	Note
	SessionTitle string
	ProjectName  string
}

// ComposeReplyEmail composes the email of one reply to an owner.
type ComposeReplyEmail func(to EmailTo, r ReplyToEmail) (Email, error)

// QueueReplyEmails queues, for each owner who wants replies emailed, one message per reply to them
// (from agents or other owners) newer than the last considered, at most 20 per owner per call, and
// moves the owner's mark past them.
func (s *Store) QueueReplyEmails(ctx context.Context, compose ComposeReplyEmail) (int, error) {
	queued := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT ms.owner_id, o.workspace_id, o.email, o.display_name, ms.replies_through
			FROM owner_mail_settings ms JOIN owners o ON o.id = ms.owner_id
			WHERE ms.replies AND EXISTS (SELECT 1 FROM notes n WHERE n.workspace_id = o.workspace_id AND n.id > ms.replies_through
				AND n.recipient_slug = owner_slug(o.id) AND `+forOwners+`)
			ORDER BY ms.owner_id LIMIT 50
			FOR UPDATE OF ms SKIP LOCKED`)
		if err != nil {
			return err
		}
		type owner struct {
			to      EmailTo
			through int64
		}
		owners, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (owner, error) {
			var o owner
			err := r.Scan(&o.to.OwnerID, &o.to.WorkspaceID, &o.to.Email, &o.to.Name, &o.through)
			return o, err
		})
		if err != nil {
			return err
		}
		for _, o := range owners {
			rows, err := tx.Query(ctx, `
				SELECT `+noteColumns+`, s.title, p.name FROM notes n
				JOIN sessions s ON s.id = n.session_id JOIN projects p ON p.id = s.project_id
				WHERE n.workspace_id = $1 AND n.id > $2 AND n.recipient_slug = $3 AND `+forOwners+`
				ORDER BY n.workspace_id, n.id LIMIT 20`, o.to.WorkspaceID, o.through, OwnerSlug(o.to.OwnerID))
			if err != nil {
				return err
			}
			replies, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ReplyToEmail, error) {
				var m ReplyToEmail
				n, err := scanNote(r, &m.SessionTitle, &m.ProjectName)
				if err == nil {
					m.Note = *n
				}
				return m, err
			})
			if err != nil {
				return err
			}
			through := o.through
			for _, r := range replies {
				through = r.ID
				if r.SentBy(o.to.OwnerID) {
					continue
				}
				m, err := compose(o.to, r)
				if err != nil {
					return err
				}
				if err := insertEmail(ctx, tx, o.to, EmailReply, r.ID, m); err != nil {
					return err
				}
				queued++
			}
			if _, err := tx.Exec(ctx, `UPDATE owner_mail_settings SET replies_through = $2 WHERE owner_id = $1`, o.to.OwnerID, through); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: queue reply mails: %w", err)
	}
	if queued > 0 {
		s.notifyAfterCommit(EmailTopic.notification(struct{}{}))
	}
	return queued, nil
}

// ComposeDigest composes an owner's digest of unread agents' notes.
type ComposeDigest func(to EmailTo, unread []InboxNote) (Email, error)

// DigestSize bounds the notes a digest lists.
const DigestSize = 20

// QueueDigests queues the daily digest of each owner whose digest is due.
func (s *Store) QueueDigests(ctx context.Context, compose ComposeDigest) (int, error) {
	queued := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT ms.owner_id, o.workspace_id, o.email, o.display_name FROM owner_mail_settings ms JOIN owners o ON o.id = ms.owner_id
			WHERE ms.digest AND ms.digest_due_at <= now()
			ORDER BY ms.digest_due_at LIMIT 20
			FOR UPDATE OF ms SKIP LOCKED`)
		if err != nil {
			return err
		}
		owners, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (EmailTo, error) {
			var to EmailTo
			err := r.Scan(&to.OwnerID, &to.WorkspaceID, &to.Email, &to.Name)
			return to, err
		})
		if err != nil {
			return err
		}
		for _, to := range owners {
			unread, err := s.Inbox(ctx, to.WorkspaceID, to.OwnerID, InboxFilter{Unread: true}, DigestSize)
			if err != nil {
				return err
			}
			var fromAgents []InboxNote
			for _, n := range unread {
				if n.FromAgent() && len(fromAgents) < DigestSize {
					fromAgents = append(fromAgents, n)
				}
			}
			if len(fromAgents) > 0 {
				m, err := compose(to, fromAgents)
				if err != nil {
					return err
				}
				if err := insertEmail(ctx, tx, to, EmailDigest, 0, m); err != nil {
					return err
				}
				queued++
			}
			// The next one a day after this one was due, never in the past.
			if _, err := tx.Exec(ctx, `UPDATE owner_mail_settings
				SET digest_due_at = greatest(digest_due_at + $2 * interval '1 millisecond', now() + interval '1 minute')
				WHERE owner_id = $1`, to.OwnerID, DigestInterval.Milliseconds()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: queue digests: %w", err)
	}
	if queued > 0 {
		s.notifyAfterCommit(EmailTopic.notification(struct{}{}))
	}
	return queued, nil
}
