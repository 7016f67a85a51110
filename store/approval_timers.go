package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

const approvalGrace = 30 * time.Second

const dueApprovalColumns = `ap.id, ap.workspace_id, ap.connection_id, ap.session_id, ap.project_id, ap.agent_slug, ap.agent_name,
	ap.agent_handle, ap.tool, ap.summary, ap.repo, ap.branch, ap.state, ap.expires_at, ap.created_at, aps.title, aps.session_type, aps.public_id`

type nullableApproval struct {
	id, workspaceID, connectionID, sessionID, projectID    *int64
	slug, name, handle, tool, summary, repo, branch, state *string
	expiresAt, createdAt                                   *time.Time
	sessionTitle, sessionType, publicID                    *string
}

func (a *nullableApproval) targets() []any {
	return []any{&a.id, &a.workspaceID, &a.connectionID, &a.sessionID, &a.projectID, &a.slug, &a.name, &a.handle, &a.tool,
		&a.summary, &a.repo, &a.branch, &a.state, &a.expiresAt, &a.createdAt, &a.sessionTitle, &a.sessionType, &a.publicID}
}

func (a *nullableApproval) approval() *Approval {
	if a.id == nil {
		return nil
	}
	return &Approval{ID: *a.id, WorkspaceID: *a.workspaceID, ConnectionID: *a.connectionID, SessionID: a.sessionID, ProjectID: a.projectID,
		AgentSlug: *a.slug, AgentName: *a.name, AgentHandle: derefOr(a.handle, ""), Tool: *a.tool, Summary: *a.summary,
		Repo: derefOr(a.repo, ""), Branch: derefOr(a.branch, ""), State: *a.state, ExpiresAt: *a.expiresAt, CreatedAt: *a.createdAt,
		SessionTitle: derefOr(a.sessionTitle, ""), SessionType: derefOr(a.sessionType, ""), SessionPublicID: derefOr(a.publicID, "")}
}

// ComposeApprovalEmail composes an approval's email to an owner, with the
// tokens of its Allow and Deny links.
type ComposeApprovalEmail func(to EmailTo, a *Approval, allow, deny string) (Email, error)

// EmailApproval is the kind of an approval's email.
const EmailApproval = "approval"

// FireApprovalTimers fires up to limit due approval timers in one transaction.
func (s *Store) FireApprovalTimers(ctx context.Context, limit int, compose ComposeApprovalEmail) (TimerResult, error) {
	var res TimerResult
	var announced []notification
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			WITH due AS (
				SELECT id FROM approvals WHERE notice_due_at <= now()
				ORDER BY notice_due_at LIMIT $1 FOR UPDATE SKIP LOCKED
			)
			UPDATE approvals a SET notice_due_at = NULL FROM due WHERE a.id = due.id
			RETURNING a.id, a.project_id, a.state = 'pending' AND a.expires_at > now()`, limit)
		if err != nil {
			return err
		}
		type notice struct {
			id      int64
			project *int64
			live    bool
		}
		notices, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notice, error) {
			var n notice
			return n, r.Scan(&n.id, &n.project, &n.live)
		})
		if err != nil {
			return err
		}
		for _, n := range notices {
			res.Fired++
			if !n.live {
				continue
			}
			if n.project != nil {
				tag, err := tx.Exec(ctx, `
					INSERT INTO webhook_deliveries (endpoint_id, approval_id, event)
					SELECT e.id, $2, 'approval' FROM webhook_endpoints e WHERE e.project_id = $1 AND e.enabled`, *n.project, n.id)
				if err != nil {
					return fmt.Errorf("queue approval webhooks: %w", err)
				}
				res.Deliveries += int(tag.RowsAffected())
			}
			if compose == nil {
				continue
			}
			m, err := s.emailApproval(ctx, tx, n.id, compose)
			if err != nil {
				return err
			}
			res.Mails += m
		}
		rows, err = tx.Query(ctx, `
			WITH stale AS (
				SELECT id FROM approvals WHERE state = 'pending' AND expires_at <= now() - $2 * interval '1 millisecond'
				ORDER BY workspace_id, id LIMIT $1 FOR UPDATE SKIP LOCKED
			)
			UPDATE approvals a SET state = 'expired', decided_at = now(), notice_due_at = NULL FROM stale WHERE a.id = stale.id
			RETURNING a.id`, limit, approvalGrace.Milliseconds())
		if err != nil {
			return err
		}
		expired, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		for _, id := range expired {
			a, err := scanApproval(tx.QueryRow(ctx, `SELECT `+approvalColumns+approvalFrom+`WHERE a.id = $1`, id))
			if err != nil {
				return err
			}
			if err := approvalDecidedEvent(ctx, tx, a); err != nil {
				return err
			}
			res.Fired++
			res.Expired++
			announced = append(announced, ApprovalTopic.notification(id))
		}
		return nil
	})
	if err != nil {
		return TimerResult{}, fmt.Errorf("store: fire approval timers: %w", err)
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

func (s *Store) emailApproval(ctx context.Context, tx pgx.Tx, id int64, compose ComposeApprovalEmail) (int, error) {
	a, err := scanApproval(tx.QueryRow(ctx, `SELECT `+approvalColumns+approvalFrom+`WHERE a.id = $1`, id))
	if err != nil {
		return 0, err
	}
	rows, err := tx.Query(ctx, questionEmailTo, a.WorkspaceID)
	if err != nil {
		return 0, err
	}
	owners, err := pgx.CollectRows(rows, pgx.RowToStructByPos[EmailTo])
	if err != nil {
		return 0, err
	}
	for _, to := range owners {
		allow, deny, err := s.createApprovalLinks(ctx, tx, a, to.OwnerID)
		if err != nil {
			return 0, err
		}
		m, err := compose(to, a, allow, deny)
		if err != nil {
			return 0, err
		}
		if err := insertEmail(ctx, tx, to, EmailApproval, 0, m); err != nil {
			return 0, err
		}
	}
	return len(owners), nil
}

// NextApprovalTimer returns how long until the soonest approval timer is
// due, by the database's clock (0 when one is due now), and false when none
// is pending.
func (s *Store) NextApprovalTimer(ctx context.Context) (time.Duration, bool, error) {
	var ms *float64
	if err := s.pool.QueryRow(ctx, `
		SELECT extract(epoch FROM least(
			(SELECT min(notice_due_at) FROM approvals WHERE notice_due_at IS NOT NULL),
			(SELECT min(expires_at) FROM approvals WHERE state = 'pending') + $1 * interval '1 millisecond') - now()) * 1000`,
		approvalGrace.Milliseconds()).Scan(&ms); err != nil {
		return 0, false, fmt.Errorf("store: next approval timer: %w", err)
	}
	if ms == nil {
		return 0, false, nil
	}
	return max(time.Duration(*ms*float64(time.Millisecond)), 0), true, nil
}
