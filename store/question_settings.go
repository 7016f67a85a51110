package store

import (
	"context"
	"errors"
	"fmt"
)

// QuestionSettings are a project's question delays.
type QuestionSettings struct {
	BlockingMinutes int
	NormalMinutes   int
	ExpiryHours     int
}

// Bounds of QuestionSettings.
const (
	MaxQuestionDelayMinutes = 60
	MaxQuestionExpiryHours  = 168
)

// DefaultQuestionSettings are a new project's.
var DefaultQuestionSettings = QuestionSettings{BlockingMinutes: 2, NormalMinutes: 15, ExpiryHours: 24}

// Validate checks the bounds; each refusal names its field.
func (q QuestionSettings) Validate() error {
	var errs []error
	if q.BlockingMinutes < 0 || q.BlockingMinutes > MaxQuestionDelayMinutes {
		errs = append(errs, &FieldError{"blocking_minutes", fmt.Sprintf("use 0 to %d minutes", MaxQuestionDelayMinutes)})
	}
	if q.NormalMinutes < 0 || q.NormalMinutes > MaxQuestionDelayMinutes {
		errs = append(errs, &FieldError{"normal_minutes", fmt.Sprintf("use 0 to %d minutes", MaxQuestionDelayMinutes)})
	}
	if q.ExpiryHours < 1 || q.ExpiryHours > MaxQuestionExpiryHours {
		errs = append(errs, &FieldError{"expiry_hours", fmt.Sprintf("use 1 to %d hours", MaxQuestionExpiryHours)})
	}
	return errors.Join(errs...)
}

// ProjectQuestionSettings returns a project's question settings.
func (s *Store) ProjectQuestionSettings(ctx context.Context, workspaceID, projectID int64) (QuestionSettings, error) {
	var q QuestionSettings
	err := s.pool.QueryRow(ctx, `
		SELECT question_blocking_minutes, question_normal_minutes, question_expiry_hours
		FROM projects WHERE workspace_id = $1 AND id = $2`, workspaceID, projectID).Scan(&q.BlockingMinutes, &q.NormalMinutes, &q.ExpiryHours)
	if err != nil {
		return q, wrap("project question settings", err)
	}
	return q, nil
}

// SetProjectQuestionSettings changes a project's question settings; they
// apply to the questions asked from then on.
func (s *Store) SetProjectQuestionSettings(ctx context.Context, workspaceID, projectID int64, q QuestionSettings) error {
	return s.setProjectQuestionSettingsIn(ctx, s.pool, workspaceID, projectID, q)
}

func (s *Store) setProjectQuestionSettingsIn(ctx context.Context, db querier, workspaceID, projectID int64, q QuestionSettings) error {
	if err := q.Validate(); err != nil {
		return err
	}
	tag, err := db.Exec(ctx, `
		UPDATE projects SET question_blocking_minutes = $3, question_normal_minutes = $4, question_expiry_hours = $5
		WHERE workspace_id = $1 AND id = $2`, workspaceID, projectID, q.BlockingMinutes, q.NormalMinutes, q.ExpiryHours)
	if err != nil {
		return fmt.Errorf("store: set project question settings: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: set project question settings: %w", ErrNotFound)
	}
	return nil
}
