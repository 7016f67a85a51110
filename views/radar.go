package views

import (
	"strings"

	"github.com/osfoundry/osfoundry/store"
)

// OverlapWarning names every agent on the same repository and branch.
type OverlapWarning struct {
	// Repo is the repository as the radar compares it (acme/shop).
	Repo   string
	Branch string
	Agents []store.SeatedAgent
}

// Overlaps groups seated agents by store.SeatedAgent.Overlap, in order.
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

// Names lists agents as a sentence: "@a, @b and @c".
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

// ProjectRadarView's Version makes an unchanged poll a 204.
type ProjectRadarView struct {
	ProjectID int64
	Warnings  []OverlapWarning
	Version   string
}
