package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Decision is an owner's answer to an approval.
type Decision struct {
	WorkspaceID int64
	OwnerID     int64
	ApprovalID  int64
	// SessionID, when not 0, is the session the approval must be of (the
	// page it was decided on).
	SessionID int64
	Allow     bool
	// Reason, for a denial, goes back to the model; optional.
	Reason string
	// From is the address the decision came from, for the audit log.
	From string
	// UserAgent is the browser the decision came from (empty from a mail link).
	UserAgent string
}

// ErrApprovalClosed refuses a decision on an approval that is no longer
// pending; Approval says who decided what, or how it ended.
type ErrApprovalClosed struct{ Approval *Approval }

func (e *ErrApprovalClosed) Error() string {
	a := e.Approval
	switch a.State {
	case ApprovalAllowed:
		return a.DecidedBy + " allowed this already"
	case ApprovalDenied:
		return a.DecidedBy + " denied this already"
	case ApprovalTerminal:
		return "this was answered at the terminal already"
	}
	return "nobody decided within the wait: the agent got no verdict, and its client asked or refused by itself"
}

// DecideApproval records an owner's decision on a pending approval of the workspace. One
// conditional UPDATE decides, so of two owners at once exactly one wins and the other gets
// *ErrApprovalClosed.
func (s *Store) DecideApproval(ctx context.Context, in Decision) (*Approval, error) {
	return s.decide(ctx, in, 0)
}

func (s *Store) decide(ctx context.Context, in Decision, link int64) (*Approval, error) {
	reason := strings.TrimSpace(in.Reason)
	if !in.Allow && utf8.RuneCountInString(reason) > MaxApprovalReason {
		return nil, &FieldError{"reason", fmt.Sprintf("use at most %d characters", MaxApprovalReason)}
	}
	if in.Allow {
		reason = ""
	}
	state := ApprovalDenied
	if in.Allow {
		state = ApprovalAllowed
	}
	var a *Approval
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// Only those who may answer decide (admins and members).
		name, _, err := checkRole(ctx, tx, in.WorkspaceID, in.OwnerID, RoleMember)
		if err != nil {
			return err
		}
		var id int64
		err = tx.QueryRow(ctx, `
			UPDATE approvals a SET state = $4, reason = NULLIF($5, ''), decided_by = o.id, decided_by_name = o.display_name,
				decided_from = left(NULLIF($6, ''), 100), decided_at = now(), notice_due_at = NULL
			FROM owners o
			WHERE a.id = $1 AND a.workspace_id = $2 AND a.state = 'pending' AND a.expires_at > now()
				AND ($7::bigint = 0 OR a.session_id = $7) AND o.id = $3 AND o.workspace_id = a.workspace_id
			RETURNING a.id`, in.ApprovalID, in.WorkspaceID, in.OwnerID, state, reason, coalesceAddr(in.From), in.SessionID).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return s.whyNotDecided(ctx, tx, in)
		}
		if err != nil {
			return err
		}
		if link != 0 {
			tag, err := tx.Exec(ctx, `UPDATE approval_links SET used_at = now()
				WHERE id = $1 AND used_at IS NULL AND expires_at > now() AND approval_id = $2 AND owner_id = $3`, link, id, in.OwnerID)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 1 {
				return ErrLinkSpent
			}
		}
		if a, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalColumns+approvalFrom+`WHERE a.id = $1`, id)); err != nil {
			return err
		}
		by := Actor{OwnerID: in.OwnerID, WorkspaceID: in.WorkspaceID, RemoteAddr: in.From, UserAgent: in.UserAgent}
		if err := insertAudit(ctx, tx, by, name, AuditEntry{Kind: AuditApprovalDecided, ProjectID: a.ProjectID,
			Subject: a.Tool + ": " + a.Summary, Detail: map[string]any{"approval_id": a.ID, "decision": string(state), "reason": reason, "agent": a.AgentSlug}}); err != nil {
			return err
		}
		return approvalDecidedEvent(ctx, tx, a)
	})
	if err != nil {
		var closed *ErrApprovalClosed
		if errors.As(err, &closed) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrLinkSpent) || errors.Is(err, ErrForbidden) {
			return nil, err
		}
		return nil, wrap("decide approval", err)
	}
	s.notifyAfterCommit(ApprovalTopic.notification(a.ID))
	return a, nil
}

func coalesceAddr(from string) string {
	if from = OneLine(from); from == "" {
		return "unknown"
	}
	return from
}

func approvalDecidedEvent(ctx context.Context, tx pgx.Tx, a *Approval) error {
	if a.SessionID == nil {
		return nil
	}
	payload := map[string]any{"approval_id": a.ID, "tool": a.Tool, "state": a.State}
	if a.DecidedBy != "" {
		payload["decided_by"] = a.DecidedBy
	}
	if a.Reason != "" {
		payload["reason"] = a.Reason
	}
	_, err := appendEvent(ctx, tx, *a.SessionID, "approval_decided", nil, payload)
	return err
}

func (s *Store) whyNotDecided(ctx context.Context, tx pgx.Tx, in Decision) error {
	a, err := scanApproval(tx.QueryRow(ctx, `SELECT `+approvalColumns+approvalFrom+`
		WHERE a.id = $1 AND a.workspace_id = $2 AND ($4::bigint = 0 OR a.session_id = $4)
			AND EXISTS (SELECT 1 FROM owners o WHERE o.id = $3 AND o.workspace_id = a.workspace_id)`,
		in.ApprovalID, in.WorkspaceID, in.OwnerID, in.SessionID))
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("store: decide approval: %w", ErrNotFound)
	}
	if err != nil {
		return err
	}
	if a.Pending() {
		a.State = ApprovalExpired
	}
	return &ErrApprovalClosed{Approval: a}
}
