package store

import (
	"fmt"
	"strconv"
	"time"

	"github.com/osfoundry/osfoundry/store/repo"
)

// OverlapWindow is how recent both statuses must be for two agents to overlap.
const OverlapWindow = 24 * time.Hour

const maxOverlaps = 10

// Overlap is another agent on the same repository and branch as the caller.
type Overlap struct {
	Handle      string    `json:"handle"`
	DisplayName string    `json:"display_name"`
	SenderSlug  string    `json:"sender_slug"`
	Repo        *string   `json:"repo"`
	Branch      *string   `json:"branch"`
	Task        *string   `json:"task"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func repoKey(r *string) *string {
	if r == nil {
		return nil
	}
	k := repo.Normalize(*r)
	if k == "" {
		return nil
	}
	return &k
}

var overlapWindowSQL = fmt.Sprintf("interval '%d seconds'", int(OverlapWindow.Seconds()))

func overlapSQL(a, b string) string {
	return a + `.repo_key = ` + b + `.repo_key AND ` + a + `.branch = ` + b + `.branch AND ` +
		a + `.updated_at > now() - ` + overlapWindowSQL + ` AND ` + b + `.updated_at > now() - ` + overlapWindowSQL
}

func overlapsOfSQL(me string) string {
	return `(SELECT coalesce(json_agg(x ORDER BY x.updated_at DESC), '[]') FROM (
		SELECT op.handle, op.display_name, coalesce(oc.sender_slug, '') AS sender_slug, o.repo, o.branch, o.task, o.updated_at
		FROM statuses o
		JOIN connections oc ON oc.id = o.connection_id AND oc.revoked_at IS NULL
		JOIN agent_profiles op ON op.connection_id = o.connection_id
		WHERE o.connection_id <> ` + me + `.connection_id AND ` + overlapSQL(me, "o") + `
			AND EXISTS (SELECT 1 FROM project_seats mine JOIN project_seats theirs ON theirs.project_id = mine.project_id
				WHERE mine.connection_id = ` + me + `.connection_id AND theirs.connection_id = o.connection_id)
		ORDER BY o.updated_at DESC LIMIT ` + strconv.Itoa(maxOverlaps) + `) x)`
}
