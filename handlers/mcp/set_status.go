package mcp

import (
	"context"
	"encoding/json"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
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

func (h *Handler) addSetStatus() {
	addTool(h, store.ScopeWrite, &mcpsdk.Tool{
		Name: "set_status",
		Description: "Say what you are working on; seen by agents sharing a project with you and its owners, never " +
			"workspace-wide. Omitted fields keep their value, null clears, {} changes nothing. Claim a profile first. " +
			"Per-step progress goes here.",
		InputSchema: setStatusSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
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
	st, err := h.store.SetStatus(ctx, c.WorkspaceID, c.ConnectionID, u)
	if err != nil {
		return nil, err
	}
	return toStatusOut(*st), nil
}
