package store

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Limits of the self-reported status fields.
const (
	MaxRepoLen   = 300
	MaxBranchLen = 200
	MaxTaskLen   = 280
)

// Status is what an agent says it is working on. Every field may be nil;
// UpdatedAt is nil when the agent never set a status.
type Status struct {
	Repo      *string
	Branch    *string
	Task      *string
	UpdatedAt *time.Time
}

// StatusField is one field of a partial status update: Set false keeps the
// stored value, Set true with a nil Value clears it.
type StatusField struct {
	Set   bool
	Value *string
}

// StatusUpdate is a partial update of a status.
type StatusUpdate struct {
	Repo   StatusField
	Branch StatusField
	Task   StatusField
}

// Empty reports whether the update changes nothing.
func (u StatusUpdate) Empty() bool { return !u.Repo.Set && !u.Branch.Set && !u.Task.Set }

// Validate checks the lengths of the fields being set.
func (u StatusUpdate) Validate() error {
	for _, f := range []struct {
		name string
		f    StatusField
		max  int
	}{{"repo", u.Repo, MaxRepoLen}, {"branch", u.Branch, MaxBranchLen}, {"task", u.Task, MaxTaskLen}} {
		if f.f.Value != nil && utf8.RuneCountInString(*f.f.Value) > f.max {
			return &FieldError{f.name, fmt.Sprintf("use at most %d characters", f.max)}
		}
	}
	return nil
}

// StatusReport is what set_status answers: the agent's whole status and the
// agents it overlaps with (the collision radar, radar.go).
type StatusReport struct {
	Status
	Overlaps []Overlap
}

// SetStatus applies a partial update to the status of the connection's agent and returns the whole
// resulting status with its overlaps, in one statement. Without a claimed profile it fails with
// ErrNoProfile.
func (s *Store) SetStatus(ctx context.Context, workspaceID, connectionID int64, u StatusUpdate) (*StatusReport, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	st := &StatusReport{}
	var err error
	if u.Empty() {
		var hasProfile bool
		err = s.pool.QueryRow(ctx, `
			SELECT true, s.repo, s.branch, s.task, s.updated_at, `+overlapsOfSQL("s")+`
			FROM agent_profiles p LEFT JOIN statuses s ON s.connection_id = p.connection_id
			WHERE p.workspace_id = $1 AND p.connection_id = $2`, workspaceID, connectionID).
			Scan(&hasProfile, &st.Repo, &st.Branch, &st.Task, &st.UpdatedAt, &st.Overlaps)
	} else {
		// One statement: insert the first status or update only the fields that were sent, and find
		// the overlaps of the result.
		err = s.pool.QueryRow(ctx, `
			WITH up AS (
				INSERT INTO statuses AS s (connection_id, repo, repo_key, branch, task)
				SELECT p.connection_id, $3, $9, $5, $7 FROM agent_profiles p
				WHERE p.workspace_id = $1 AND p.connection_id = $2
				ON CONFLICT (connection_id) DO UPDATE SET
					repo       = CASE WHEN $4 THEN EXCLUDED.repo ELSE s.repo END,
					repo_key   = CASE WHEN $4 THEN EXCLUDED.repo_key ELSE s.repo_key END,
					branch     = CASE WHEN $6 THEN EXCLUDED.branch ELSE s.branch END,
					task       = CASE WHEN $8 THEN EXCLUDED.task ELSE s.task END,
					updated_at = now()
				RETURNING s.connection_id, s.repo, s.repo_key, s.branch, s.task, s.updated_at)
			SELECT up.repo, up.branch, up.task, up.updated_at, `+overlapsOfSQL("up")+` FROM up`,
			workspaceID, connectionID,
			u.Repo.Value, u.Repo.Set, u.Branch.Value, u.Branch.Set, u.Task.Value, u.Task.Set, repoKey(u.Repo.Value)).
			Scan(&st.Repo, &st.Branch, &st.Task, &st.UpdatedAt, &st.Overlaps)
		if err == nil {
			s.notifyAfterCommit(PresenceTopic.notification(workspaceID))
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: set status: %w", ErrNoProfile)
	}
	if err != nil {
		return nil, fmt.Errorf("store: set status: %w", err)
	}
	return st, nil
}
