package views

import (
	"strings"

	"github.com/osfoundry/osfoundry/store"
)

// OverlapWarning is one collision the radar sees in a project: the agents
// seated there that say they are on the same repository and branch. Owners
// get one warning naming all of them.
type OverlapWarning struct {
	// Repo is the repository as the radar compares it (acme/shop).
	Repo   string
	Branch string
	Agents []store.SeatedAgent
}

// Overlaps groups a project's seated agents by the overlap the store found
// for each (store.SeatedAgent.Overlap), in the order the agents come.
func Overlaps(agents []store.SeatedAgent) []OverlapWarning {
	var out []OverlapWarning
	at := map[string]int{}
	for _, a := range agents {
		if a.Overlap == nil || a.Status.Branch == nil {
			continue
		}
		key := *a.Overlap + "\x00" + *a.Status.Branch
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, OverlapWarning{Repo: *a.Overlap, Branch: *a.Status.Branch})
		}
		out[i].Agents = append(out[i].Agents, a)
	}
	return out
}

// Names lists the agents as a sentence does: "@ada-claude and @bob-claude",
// "@a, @b and @c".
func (w OverlapWarning) Names() string {
	names := make([]string, len(w.Agents))
	for i, a := range w.Agents {
		names[i] = "@" + a.Handle
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// ProjectRadarView is the project page's collision warnings, which poll for
// changes; Version fingerprints them, so an unchanged poll is a 204.
type ProjectRadarView struct {
	ProjectID int64
	Warnings  []OverlapWarning
	Version   string
}
