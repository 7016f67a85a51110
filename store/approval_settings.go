package store

import (
	"context"
	"errors"
	"fmt"
)

// ConnectionApprovalSettings returns the settings an approval of the connection would have now.
func (s *Store) ConnectionApprovalSettings(ctx context.Context, workspaceID, connectionID int64) (ApprovalSettings, error) {
	var a ApprovalSettings
	var slug, handle *string
	var name string
	var sessionID, projectID *int64
	err := s.pool.QueryRow(ctx, approvalWhereSQL, connectionID, workspaceID).
		Scan(&slug, &name, &handle, &sessionID, &projectID, &a.Enabled, &a.WaitSeconds, &a.DelayMinutes)
	if err != nil {
		return a, wrap("connection approval settings", err)
	}
	return a, nil
}

// ApprovalSettings are a project's: approvals on or off, the hook's wait,
// and the delay before webhooks and email.
type ApprovalSettings struct {
	Enabled      bool
	WaitSeconds  int
	DelayMinutes int
}

// DefaultApprovalSettings are a new project's, and those of an approval
// with no session.
var DefaultApprovalSettings = ApprovalSettings{Enabled: true, WaitSeconds: DefaultApprovalWaitSeconds}

// Validate checks the bounds; each refusal names its field.
func (a ApprovalSettings) Validate() error {
	var errs []error
	if a.WaitSeconds < MinApprovalWaitSeconds || a.WaitSeconds > MaxApprovalWaitSeconds {
		errs = append(errs, &FieldError{"approval_wait_seconds", fmt.Sprintf("use %d to %d seconds", MinApprovalWaitSeconds, MaxApprovalWaitSeconds)})
	}
	if a.DelayMinutes < 0 || a.DelayMinutes > MaxApprovalDelayMinutes {
		errs = append(errs, &FieldError{"approval_delay_minutes", fmt.Sprintf("use 0 to %d minutes", MaxApprovalDelayMinutes)})
	}
	return errors.Join(errs...)
}

// ProjectApprovalSettings returns a project's approval settings.
func (s *Store) ProjectApprovalSettings(ctx context.Context, workspaceID, projectID int64) (ApprovalSettings, error) {
	var a ApprovalSettings
	err := s.pool.QueryRow(ctx, `SELECT approvals_enabled, approval_wait_seconds, approval_delay_minutes
		FROM projects WHERE workspace_id = $1 AND id = $2`, workspaceID, projectID).Scan(&a.Enabled, &a.WaitSeconds, &a.DelayMinutes)
	if err != nil {
		return a, wrap("project approval settings", err)
	}
	return a, nil
}

// SetProjectApprovalSettings changes a project's approval settings; they
// apply to the approvals asked from then on.
func (s *Store) SetProjectApprovalSettings(ctx context.Context, workspaceID, projectID int64, a ApprovalSettings) error {
	if err := a.Validate(); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE projects SET approvals_enabled = $3, approval_wait_seconds = $4, approval_delay_minutes = $5
		WHERE workspace_id = $1 AND id = $2`, workspaceID, projectID, a.Enabled, a.WaitSeconds, a.DelayMinutes)
	if err != nil {
		return fmt.Errorf("store: set project approval settings: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: set project approval settings: %w", ErrNotFound)
	}
	return nil
}
