package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/repo"
	"github.com/osfoundry/osfoundry/views/timeago"
)

// set_status's three fields are fixed by the product: each a string or null
// (null clears it), none required.
var setStatusSchema = object{properties: []property{
	{"repo", nullableTextMax(store.MaxRepoLen)},
	{"branch", nullableTextMax(store.MaxBranchLen)},
	{"task", nullableTextMax(store.MaxTaskLen)},
}}

type statusOut struct {
	Repo         *string    `json:"repo"`
	Branch       *string    `json:"branch"`
	Task         *string    `json:"task"`
	UpdatedAt    *time.Time `json:"updated_at"`
	SelfReported bool       `json:"self_reported"`
}

func toStatusOut(s store.Status) statusOut {
	return statusOut{Repo: s.Repo, Branch: s.Branch, Task: s.Task, UpdatedAt: s.UpdatedAt, SelfReported: true}
}

// setStatusOut is set_status's answer: the whole status, and the agents
// sharing a project with the caller that are on the same repository and
// branch (the collision radar), in data and, as overlapHint, in the words
// of the result's text lines.
type setStatusOut struct {
	statusOut
	Overlaps    []overlapOut `json:"overlaps"`
	OverlapHint string       `json:"overlap_hint,omitempty"`
	lineList    []string
}

type overlapOut struct {
	Handle      string    `json:"handle"`
	DisplayName string    `json:"display_name"`
	SenderSlug  string    `json:"sender_slug"`
	Repo        *string   `json:"repo"`
	Branch      *string   `json:"branch"`
	Task        *string   `json:"task"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func (o setStatusOut) lines() []string { return o.lineList }

// overlapLinesShown is how many overlapping agents the text names one by one.
const overlapLinesShown = 3

// overlapLine says in one line who else is on the caller's branch:
// `@bob-claude is also on acme/shop fix/orders-total (task "refunds", 2 min ago): ask it with reply_to_sender (ext-bob-claude) before you push.`
func overlapLine(now time.Time, o store.Overlap) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@%s is also on ", o.Handle)
	if o.Repo != nil {
		b.WriteString(repo.Normalize(*o.Repo))
	}
	if o.Branch != nil {
		b.WriteString(" " + *o.Branch)
	}
	b.WriteString(" (")
	if o.Task != nil && strings.TrimSpace(*o.Task) != "" {
		fmt.Fprintf(&b, "task \"%s\", ", clipText(strings.Join(strings.Fields(*o.Task), " "), 80))
	}
	fmt.Fprintf(&b, "%s): ask it with reply_to_sender (%s) before you push.", timeago.Format(now, o.UpdatedAt), o.SenderSlug)
	return b.String()
}

// clipText cuts s to n characters, marking the cut.
func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func toSetStatusOut(now time.Time, r store.StatusReport) setStatusOut {
	out := setStatusOut{statusOut: toStatusOut(r.Status), Overlaps: make([]overlapOut, len(r.Overlaps))}
	for i, o := range r.Overlaps {
		out.Overlaps[i] = overlapOut(o)
		if i < overlapLinesShown {
			out.lineList = append(out.lineList, overlapLine(now, o))
		}
	}
	if more := len(r.Overlaps) - overlapLinesShown; more > 0 {
		out.lineList = append(out.lineList, fmt.Sprintf("%d more agents are on the same branch: list_agents marks them overlaps_you.", more))
	}
	out.OverlapHint = strings.Join(out.lineList, "\n")
	return out
}

func (h *Handler) addSetStatus() {
	addTool(h, store.ScopeWrite, &mcpsdk.Tool{
		Name: "set_status",
		Description: "Your task with per-step progress, seen by agents sharing a project with you and its owners, " +
			"never workspace-wide. Omitted fields keep their value, null clears.",
		InputSchema: setStatusSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, h.setStatus)
}

// setStatus takes raw fields so that an omitted field (keep) and null
// (clear) stay distinguishable.
func (h *Handler) setStatus(ctx context.Context, c *caller, in map[string]json.RawMessage) (any, error) {
	var u store.StatusUpdate
	for name, f := range map[string]*store.StatusField{"repo": &u.Repo, "branch": &u.Branch, "task": &u.Task} {
		raw, ok := in[name]
		if !ok {
			continue
		}
		f.Set = true
		if err := json.Unmarshal(raw, &f.Value); err != nil {
			return nil, refusalf("%s: use a string or null", name)
		}
	}
	st, err := h.store.AsCaller(c.check).SetStatus(ctx, c.WorkspaceID, c.ConnectionID, u)
	if err != nil {
		return nil, err
	}
	return toSetStatusOut(time.Now(), *st), nil
}
