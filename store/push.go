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

// Kinds of push.
const (
	PushQuestion = "question"
	PushReply    = "reply"
	// PushClosed replaces a question's notification once it is answered or
	// expired (migrations/076_push_closed.sql), and an approval's once it is
	// decided or ended (migrations/077_push_approvals.sql).
	PushClosed = "closed"
	// PushApproval is an approval waiting for a decision, pushed at once to
	// the devices of each owner who may decide.
	PushApproval = "approval"
)

// Push states, those of the mail outbox.
const (
	PushPending = "pending"
	PushSent    = "sent"
	PushFailed  = "failed"
	// PushSkipped: not sent, because the owner read the note, or its
	// question was answered or expired, before it went out.
	PushSkipped = "skipped"
)

// Limits of a subscription.
const (
	MaxPushEndpointLen = 2000
	MaxDeviceNameLen   = 80
	// MaxDevices bounds the devices of one owner.
	MaxDevices = 20
)

// PushSubscription is one browser subscribed to an owner's pushes.
type PushSubscription struct {
	ID        int64
	Name      string
	UserAgent string
	Endpoint  string
	CreatedAt time.Time
	// LastPushAt is when the push service last accepted a push for it.
	LastPushAt *time.Time
}

// PushSubscribe is a browser's PushSubscription as Account sends it.
type PushSubscribe struct {
	Endpoint string
	// P256dh is the browser's P-256 public key (65 bytes uncompressed),
	// Auth its 16-byte authentication secret (RFC 8291).
	P256dh, Auth []byte
	Name         string
	UserAgent    string
}

func (p *PushSubscribe) validate(allowHTTP bool) error {
	p.Name = strings.TrimSpace(p.Name)
	switch {
	case !strings.HasPrefix(p.Endpoint, "https://") && !(allowHTTP && strings.HasPrefix(p.Endpoint, "http://")):
		return &FieldError{"endpoint", "must be an https URL of a push service"}
	case len(p.Endpoint) > MaxPushEndpointLen:
		return &FieldError{"endpoint", fmt.Sprintf("use at most %d characters", MaxPushEndpointLen)}
	case len(p.P256dh) != 65 || p.P256dh[0] != 4:
		return &FieldError{"keys.p256dh", "must be an uncompressed P-256 public key (65 bytes, base64url)"}
	case len(p.Auth) != 16:
		return &FieldError{"keys.auth", "must be 16 bytes, base64url"}
	}
	if err := ValidateDeviceName(p.Name); err != nil {
		return err
	}
	if r := []rune(p.UserAgent); len(r) > 500 {
		p.UserAgent = string(r[:500])
	}
	return nil
}

// ValidateDeviceName checks a device's name.
func ValidateDeviceName(name string) error {
	switch n := utf8.RuneCountInString(name); {
	case strings.TrimSpace(name) == "":
		return &FieldError{"name", "name the device"}
	case n > MaxDeviceNameLen:
		return &FieldError{"name", fmt.Sprintf("use at most %d characters", MaxDeviceNameLen)}
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return &FieldError{"name", "use no control characters"}
	}
	return nil
}

// SubscribePush records a browser's subscription for the owner.
func (s *Store) SubscribePush(ctx context.Context, workspaceID, ownerID int64, in PushSubscribe, allowHTTP bool) (*PushSubscription, error) {
	if err := in.validate(allowHTTP); err != nil {
		return nil, err
	}
	var p PushSubscription
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM push_subscriptions WHERE endpoint = $1 AND owner_id <> $2`, in.Endpoint, ownerID); err != nil {
			return err
		}
		var count int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM push_subscriptions WHERE owner_id = $1 AND endpoint <> $2`, ownerID, in.Endpoint).Scan(&count); err != nil {
			return err
		}
		if count >= MaxDevices {
			return &FieldError{"endpoint", fmt.Sprintf("you have %d devices already; remove one first", MaxDevices)}
		}
		return tx.QueryRow(ctx, `
			INSERT INTO push_subscriptions AS ps (workspace_id, owner_id, endpoint, p256dh, auth, name, user_agent)
			SELECT o.workspace_id, o.id, $3, $4, $5, $6, $7 FROM owners o WHERE o.id = $2 AND o.workspace_id = $1
			ON CONFLICT (endpoint) DO UPDATE SET p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth, user_agent = EXCLUDED.user_agent
			RETURNING ps.id, ps.name, ps.user_agent, ps.endpoint, ps.created_at, ps.last_push_at`,
			workspaceID, ownerID, in.Endpoint, in.P256dh, in.Auth, in.Name, in.UserAgent).
			Scan(&p.ID, &p.Name, &p.UserAgent, &p.Endpoint, &p.CreatedAt, &p.LastPushAt)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: subscribe push: %w", ErrNotFound)
	}
	if fe := FieldErrorsOf(err); fe != nil {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("store: subscribe push: %w", err)
	}
	return &p, nil
}

// PushSubscriptions lists the owner's devices, the newest first.
func (s *Store) PushSubscriptions(ctx context.Context, ownerID int64) ([]PushSubscription, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, name, user_agent, endpoint, created_at, last_push_at FROM push_subscriptions
		WHERE owner_id = $1 ORDER BY created_at DESC, id DESC`, ownerID)
	if err != nil {
		return nil, fmt.Errorf("store: push subscriptions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PushSubscription, error) {
		var p PushSubscription
		err := r.Scan(&p.ID, &p.Name, &p.UserAgent, &p.Endpoint, &p.CreatedAt, &p.LastPushAt)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: push subscriptions: %w", err)
	}
	return out, nil
}

// RenamePushSubscription names one of the owner's devices; another owner's
// is ErrNotFound.
func (s *Store) RenamePushSubscription(ctx context.Context, ownerID, id int64, name string) error {
	name = strings.TrimSpace(name)
	if err := ValidateDeviceName(name); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE push_subscriptions SET name = $3 WHERE id = $2 AND owner_id = $1`, ownerID, id, name)
	if err != nil {
		return fmt.Errorf("store: rename push subscription: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: rename push subscription: %w", ErrNotFound)
	}
	return nil
}

// RemovePushSubscription removes one of the owner's devices and what was
// queued for it; another owner's is ErrNotFound.
func (s *Store) RemovePushSubscription(ctx context.Context, ownerID, id int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM push_subscriptions WHERE id = $2 AND owner_id = $1`, ownerID, id)
	if err != nil {
		return fmt.Errorf("store: remove push subscription: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: remove push subscription: %w", ErrNotFound)
	}
	return nil
}

// DropPushSubscription removes a subscription its push service no longer
// knows (it answered 404 or 410), with what was queued for it.
func (s *Store) DropPushSubscription(ctx context.Context, id int64) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM push_subscriptions WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: drop push subscription: %w", err)
	}
	return nil
}

// PushSettings are what an owner wants pushed: questions and approvals
// (Questions, on unless turned off) and replies to them (off unless turned
// on).
type PushSettings struct {
	Questions bool
	Replies   bool
}

// DefaultPushSettings are an owner's until they choose.
var DefaultPushSettings = PushSettings{Questions: true}

// PushSettingsOf returns the owner's push settings.
func (s *Store) PushSettingsOf(ctx context.Context, ownerID int64) (PushSettings, error) {
	p := DefaultPushSettings
	err := s.pool.QueryRow(ctx, `SELECT questions, replies FROM owner_push_settings WHERE owner_id = $1`, ownerID).Scan(&p.Questions, &p.Replies)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return p, fmt.Errorf("store: push settings: %w", err)
	}
	return p, nil
}

// SetPushSettings records the owner's push settings, in one statement.
func (s *Store) SetPushSettings(ctx context.Context, workspaceID, ownerID int64, p PushSettings) error {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO owner_push_settings (owner_id, workspace_id, questions, replies)
		SELECT o.id, o.workspace_id, $3, $4 FROM owners o WHERE o.id = $2 AND o.workspace_id = $1
		ON CONFLICT (owner_id) DO UPDATE SET questions = EXCLUDED.questions, replies = EXCLUDED.replies`,
		workspaceID, ownerID, p.Questions, p.Replies)
	if err != nil {
		return fmt.Errorf("store: set push settings: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: set push settings: %w", ErrNotFound)
	}
	return nil
}

// OutgoingPush is a claimed push of the outbox, with the note it is about
// as it stands now.
type OutgoingPush struct {
	ID int64
	// Attempt is this attempt's number; it fences the result.
	Attempt int
	Kind    string
	Urgency string
	OwnerID int64
	// Subscription is the device: its id, endpoint and keys.
	SubscriptionID int64
	Endpoint       string
	P256dh, Auth   []byte
	// The note: its id, session, sender, subject and body; the session's
	// title and its project's name.
	NoteID, SessionID     int64
	SenderName            string
	Subject, Body         string
	SessionTitle, Project string
	// Options are a question's (none for a free-text one or another kind).
	Options                           []string
	QuestionState, Answer, AnsweredBy string
	// Approval is the approval a push is about as it stands now (ID 0: the push is about a note;
	// then NoteID is set, else NoteID is 0).
	Approval Approval
	// Stale: the owner read the note, or its question was answered or expired, or its approval is
	// no longer pending, since it was queued.
	Stale bool
}

// ClaimPushes claims up to limit due pushes for lease.
func (s *Store) ClaimPushes(ctx context.Context, limit int, lease time.Duration) ([]OutgoingPush, error) {
	rows, err := s.pool.Query(ctx, `
		WITH due AS (
			SELECT p.id, p.subscription_id, p.note_id, p.approval_id FROM push_outbox p
			WHERE p.state = 'pending' AND p.next_attempt_at <= now()
				AND (p.claimed_until IS NULL OR p.claimed_until <= now())
			ORDER BY p.next_attempt_at, p.id
			LIMIT $1
			FOR UPDATE SKIP LOCKED
		)
		UPDATE push_outbox p SET attempts = p.attempts + 1, claimed_until = now() + $2 * interval '1 millisecond'
		FROM due
			JOIN push_subscriptions s ON s.id = due.subscription_id
			LEFT JOIN notes n ON n.id = due.note_id
			LEFT JOIN approvals a ON a.id = due.approval_id
			LEFT JOIN sessions ss ON ss.id = coalesce(n.session_id, a.session_id)
			LEFT JOIN projects pr ON pr.id = ss.project_id
		WHERE p.id = due.id
		RETURNING p.id, p.attempts, p.kind, p.urgency, p.owner_id, s.id, s.endpoint, s.p256dh, s.auth,
			coalesce(n.id, 0), coalesce(n.session_id, 0), coalesce(n.sender_name, ''), coalesce(n.subject, ''), coalesce(n.body, ''),
			coalesce(ss.title, ''), coalesce(pr.name, ''),
			coalesce((SELECT q.options FROM questions q WHERE q.note_id = n.id), '{}'),
			coalesce((SELECT q.state FROM questions q WHERE q.note_id = n.id), ''),
			coalesce((SELECT q.answer FROM questions q WHERE q.note_id = n.id), ''),
			coalesce((SELECT q.answered_by_name FROM questions q WHERE q.note_id = n.id), ''),
			coalesce(a.id, 0), a.session_id, coalesce(a.agent_name, ''), coalesce(a.agent_handle, ''), coalesce(a.tool, ''),
			coalesce(a.summary, ''), coalesce(a.repo, ''), coalesce(a.branch, ''), coalesce(a.state, ''), coalesce(a.decided_by_name, ''),
			p.kind <> 'closed' AND (
				EXISTS (SELECT 1 FROM note_reads r WHERE r.owner_id = p.owner_id AND r.session_id = n.session_id AND r.last_read_note_id >= n.id)
				OR (p.kind = 'question' AND EXISTS (SELECT 1 FROM questions q WHERE q.note_id = n.id AND q.state <> 'open'))
				OR (p.kind = 'approval' AND (a.state <> 'pending' OR a.expires_at <= now())))`,
		limit, lease.Milliseconds())

	if err != nil {
		return nil, fmt.Errorf("store: claim pushes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (OutgoingPush, error) {
		var p OutgoingPush
		err := r.Scan(&p.ID, &p.Attempt, &p.Kind, &p.Urgency, &p.OwnerID, &p.SubscriptionID, &p.Endpoint, &p.P256dh, &p.Auth,
			&p.NoteID, &p.SessionID, &p.SenderName, &p.Subject, &p.Body, &p.SessionTitle, &p.Project, &p.Options,
			&p.QuestionState, &p.Answer, &p.AnsweredBy,
			&p.Approval.ID, &p.Approval.SessionID, &p.Approval.AgentName, &p.Approval.AgentHandle, &p.Approval.Tool,
			&p.Approval.Summary, &p.Approval.Repo, &p.Approval.Branch, &p.Approval.State, &p.Approval.DecidedBy, &p.Stale)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim pushes: %w", err)
	}
	return out, nil
}

// FinishPush records attempt number attempt of a push.
func (s *Store) FinishPush(ctx context.Context, id int64, attempt int, state string, retryIn time.Duration, errText string) (bool, error) {
	var msg *string
	if errText != "" {
		if r := []rune(errText); len(r) > 300 {
			errText = string(r[:299]) + "…"
		}
		msg = &errText
	}
	var done int
	err := s.pool.QueryRow(ctx, `
		WITH done AS (
			UPDATE push_outbox SET state = $3, claimed_until = NULL, last_error = $4,
				next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + $5 * interval '1 millisecond' ELSE next_attempt_at END,
				finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
			WHERE id = $1 AND attempts = $2 AND state = 'pending' AND claimed_until IS NOT NULL
			RETURNING subscription_id
		), seen AS (
			UPDATE push_subscriptions SET last_push_at = now() WHERE $3 = 'sent' AND id IN (SELECT subscription_id FROM done)
		)
		SELECT count(*) FROM done`, id, attempt, state, msg, retryIn.Milliseconds()).Scan(&done)
	if err != nil {
		return false, fmt.Errorf("store: finish push: %w", err)
	}
	return done == 1, nil
}

// PushOutboxDepth is what the push outbox holds, for the metrics; its
// fields mean what EmailOutboxDepth's do.
type PushOutboxDepth = EmailOutboxDepth

// PushOutboxDepth measures the push outbox in one statement.
func (s *Store) PushOutboxDepth(ctx context.Context) (PushOutboxDepth, error) {
	var d PushOutboxDepth
	var ageMS float64
	err := s.pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE state = 'pending'),
			count(*) FILTER (WHERE due),
			coalesce(extract(epoch FROM now() - min(next_attempt_at) FILTER (WHERE due)) * 1000, 0),
			count(*) FILTER (WHERE state = 'failed')
		FROM (SELECT state, next_attempt_at,
				state = 'pending' AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until <= now()) AS due
			FROM push_outbox) p`).Scan(&d.Pending, &d.Due, &ageMS, &d.Failed)
	if err != nil {
		return d, fmt.Errorf("store: push outbox depth: %w", err)
	}
	d.OldestDueAge = time.Duration(ageMS * float64(time.Millisecond))
	return d, nil
}

// PrunePushes deletes the pushes that finished more than EmailRetention ago.
func (s *Store) PrunePushes(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM push_outbox WHERE state <> 'pending' AND finished_at < now() - $1 * interval '1 millisecond'`,
		EmailRetention.Milliseconds())
	if err != nil {
		return 0, fmt.Errorf("store: prune pushes: %w", err)
	}
	return tag.RowsAffected(), nil
}
