package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DueWebhook is a claimed delivery with everything its body is made of.
type DueWebhook struct {
	ID int64
	// Attempt is this attempt's number (1 for the first).
	Attempt   int
	CreatedAt time.Time
	// Now is the database clock at the claim.
	Now time.Time

	EndpointID int64
	URL        string
	Kind       string
	Secret     []byte

	// Note is nil for a test delivery; Session is then nil too.
	Note        *Note
	Session     *Session
	ProjectID   int64
	ProjectName string
	// Event is "note" (a note, or a test without one), "question" (a question's notice) or
	// "reminder" (its reminder).
	Event    string
	Question *Question
	// Approval is the approval of an "approval" event (Note is nil).
	Approval *Approval
}

// ClaimWebhookDeliveries claims up to limit due deliveries for a sender, for lease. Rows locked by
// a concurrent claim are skipped (FOR UPDATE SKIP LOCKED), so replicas never claim the same
// delivery.
func (s *Store) ClaimWebhookDeliveries(ctx context.Context, limit int, lease time.Duration, except []int64) ([]DueWebhook, error) {
	if except == nil {
		except = []int64{}
	}
	rows, err := s.pool.Query(ctx, `
		WITH RECURSIVE heads AS (
			-- The oldest pending delivery of each endpoint, one index probe
			-- per endpoint with pending deliveries (however many are pending).
			(SELECT endpoint_id, id FROM webhook_deliveries WHERE state = 'pending' ORDER BY endpoint_id, id LIMIT 1)
			UNION ALL
			SELECT nxt.endpoint_id, nxt.id FROM heads h, LATERAL (
				SELECT endpoint_id, id FROM webhook_deliveries
				WHERE state = 'pending' AND endpoint_id > h.endpoint_id ORDER BY endpoint_id, id LIMIT 1) nxt
		), due AS (
			SELECT d.id, d.endpoint_id, d.note_id, d.event, d.approval_id
			FROM heads h
			JOIN webhook_deliveries d ON d.id = h.id
			JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
			WHERE d.state = 'pending' AND d.next_attempt_at <= now()
				AND (d.claimed_until IS NULL OR d.claimed_until <= now())
				AND d.id <> ALL($3)
			ORDER BY d.next_attempt_at, d.id
			LIMIT $1
			FOR UPDATE OF d SKIP LOCKED
		)
		UPDATE webhook_deliveries d SET attempts = d.attempts + 1, claimed_until = now() + $2 * interval '1 millisecond'
		FROM due
		JOIN webhook_endpoints e ON e.id = due.endpoint_id
		JOIN projects p ON p.id = e.project_id
		LEFT JOIN notes n ON n.id = due.note_id
		LEFT JOIN sessions ss ON ss.id = n.session_id
		LEFT JOIN questions q ON q.note_id = due.note_id AND due.event <> 'note'
		LEFT JOIN approvals ap ON ap.id = due.approval_id
		LEFT JOIN sessions aps ON aps.id = ap.session_id
		WHERE d.id = due.id
		RETURNING d.id, d.attempts, d.created_at, now(), d.endpoint_id, e.url, e.kind, e.secret, e.project_id, p.name,
			ss.session_type, ss.public_id, ss.title, d.event, `+noteColumns+`, `+questionColumns("q")+`, `+dueApprovalColumns,
		limit, lease.Milliseconds(), except)
	if err != nil {
		return nil, fmt.Errorf("store: claim webhooks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DueWebhook, error) {
		var d DueWebhook
		var sessionType, publicID, title *string
		var n nullableNote
		var q nullableQuestion
		var a nullableApproval
		err := r.Scan(append(append(append([]any{&d.ID, &d.Attempt, &d.CreatedAt, &d.Now, &d.EndpointID, &d.URL, &d.Kind, &d.Secret,
			&d.ProjectID, &d.ProjectName, &sessionType, &publicID, &title, &d.Event}, n.targets()...), q.targets()...), a.targets()...)...)
		if err != nil {
			return d, err
		}
		d.Approval = a.approval()
		if d.Question = q.question(); d.Question != nil && n.Body != nil {
			d.Question.Text = *n.Body
		}
		if n.ID != nil && sessionType != nil {
			note := n.note()
			d.Note = &note
			d.Session = &Session{ID: note.SessionID, WorkspaceID: note.WorkspaceID, ProjectID: d.ProjectID,
				Type: *sessionType, PublicID: *publicID, Title: *title}
		}
		return d, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim webhooks: %w", err)
	}
	return out, nil
}

// WebhookAttempt is the result of one delivery attempt.
type WebhookAttempt struct {
	// State is DeliveryDelivered, DeliveryFailed (no more attempts) or
	// DeliveryPending (tried again after RetryIn).
	State   string
	RetryIn time.Duration
	// ResponseCode is the HTTP status received, 0 when there was no answer.
	ResponseCode int
	// Error says what went wrong, empty on success (cut to 300 characters).
	Error string
}

// FinishWebhookAttempt records the result of attempt number attempt of a delivery and releases its
// lease.
func (s *Store) FinishWebhookAttempt(ctx context.Context, id int64, attempt int, a WebhookAttempt) (bool, error) {
	var code *int
	if a.ResponseCode != 0 {
		code = &a.ResponseCode
	}
	var msg *string
	if a.Error != "" {
		m := a.Error
		if r := []rune(m); len(r) > 300 {
			m = string(r[:299]) + "…"
		}
		msg = &m
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE webhook_deliveries SET state = $3, claimed_until = NULL, response_code = $4, last_error = $5,
			next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + $6 * interval '1 millisecond' ELSE next_attempt_at END,
			finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
		WHERE id = $1 AND attempts = $2 AND state = 'pending' AND claimed_until IS NOT NULL`,
		id, attempt, a.State, code, msg, a.RetryIn.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("store: finish webhook attempt: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// OutboxDepth is the state of the webhook outbox, for operators.
type OutboxDepth struct {
	// Pending counts deliveries not yet delivered or failed.
	Pending int64
	// Due counts endpoints whose next delivery may be sent now and is not being sent.
	Due int64
	// OldestDueAge is how long the most overdue of those has been due.
	OldestDueAge time.Duration
}

// WebhookOutboxDepth measures the outbox with one statement over the
// pending deliveries only (a partial index), cheap enough to scrape often.
func (s *Store) WebhookOutboxDepth(ctx context.Context) (OutboxDepth, error) {
	var o OutboxDepth
	var ageMS float64
	err := s.pool.QueryRow(ctx, `
		WITH heads AS (
			SELECT DISTINCT ON (d.endpoint_id) d.next_attempt_at, d.claimed_until, e.enabled
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.state = 'pending'
			ORDER BY d.endpoint_id, d.id
		)
		SELECT (SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'),
			count(*),
			coalesce(extract(epoch FROM now() - min(next_attempt_at)) * 1000, 0)
		FROM heads
		WHERE enabled AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until <= now())`).Scan(&o.Pending, &o.Due, &ageMS)
	if err != nil {
		return o, fmt.Errorf("store: webhook outbox depth: %w", err)
	}
	o.OldestDueAge = time.Duration(ageMS * float64(time.Millisecond))
	return o, nil
}

// PruneWebhookDeliveries deletes delivered and failed deliveries that are no longer among the
// DeliveryLogSize newest of their endpoint, so the log keeps what the page shows and the table
// stays small.
func (s *Store) PruneWebhookDeliveries(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `
		DELETE FROM webhook_deliveries d
		USING webhook_endpoints e,
			LATERAL (SELECT id FROM webhook_deliveries o WHERE o.endpoint_id = e.id
				ORDER BY o.endpoint_id, o.id DESC OFFSET $1 LIMIT 1) edge
		WHERE d.endpoint_id = e.id AND d.id <= edge.id AND d.state <> 'pending'`, DeliveryLogSize)
	if err != nil {
		return 0, fmt.Errorf("store: prune webhook deliveries: %w", err)
	}
	return tag.RowsAffected(), nil
}
