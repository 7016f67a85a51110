package store

import (
	"fmt"
	"strconv"
	"time"

	"github.com/osfoundry/osfoundry/store/repo"
)

// The collision radar: two agents overlap when they share a project and
// their statuses name the same repository (as repo.Normalize names it,
// stored in statuses.repo_key) and the same branch, both updated within
// OverlapWindow. set_status answers with the caller's overlaps, list_agents
// marks them, and owners see them on the presence sidebar and the project
// page; each computes them in the statement it already runs.

// OverlapWindow is how recent both statuses must be for two agents to overlap.
const OverlapWindow = 24 * time.Hour

// maxOverlaps bounds the overlaps one set_status answer lists.
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

// repoKey is what statuses.repo_key holds for a repo: its normalised name,
// or NULL when there is none.
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

// overlapWindowSQL is OverlapWindow as an SQL interval.
var overlapWindowSQL = fmt.Sprintf("interval '%d seconds'", int(OverlapWindow.Seconds()))

// overlapSQL is the one rule of the radar as a condition on two statuses
// (rows of statuses, or of a CTE with its columns) named a and b: the same
// repository and branch, both recent. Sharing a project is the caller's to
// join, as each query reaches the other agents its own way.
func overlapSQL(a, b string) string {
	return a + `.repo_key = ` + b + `.repo_key AND ` + a + `.branch = ` + b + `.branch AND ` +
		a + `.updated_at > now() - ` + overlapWindowSQL + ` AND ` + b + `.updated_at > now() - ` + overlapWindowSQL
}

// overlapsOfSQL is a JSON array of the Overlaps of the status me (a row
// with connection_id and the status columns): the live agents seated in a
// project with me whose status overlaps, most recently updated first.
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
