package mcp

import (
	"context"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

type agentOut struct {
	Handle      string `json:"handle"`
	DisplayName string `json:"display_name"`
	Presence    string `json:"presence"`
	// The status, present only where the caller shares a project with the agent.
	*statusOut
	// OverlapsYou marks an agent on the caller's repository and branch.
	OverlapsYou bool `json:"overlaps_you,omitempty"`
}

type agentsOut struct {
	Agents []agentOut `json:"agents"`
}

func (h *Handler) addListAgents() {
	addTool(h, store.ScopeRead, &mcpsdk.Tool{
		Name:        "list_agents",
		Description: "Your workspace's agents, presence; self-reported work only for agents sharing a project with you.",
		InputSchema: noArgs.raw(),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.listAgents)
}

func (h *Handler) listAgents(ctx context.Context, c *caller, _ map[string]any) (any, error) {
	agents, err := h.store.AsCaller(c.check).ListAgents(ctx, c.WorkspaceID, c.ConnectionID)
	if err != nil {
		return nil, err
	}
	out := agentsOut{Agents: make([]agentOut, 0, len(agents))}
	for _, a := range agents {
		o := agentOut{Handle: a.Handle, DisplayName: a.DisplayName, Presence: a.Presence, OverlapsYou: a.OverlapsYou}
		if a.SharesProject {
			s := toStatusOut(a.Status)
			o.statusOut = &s
		}
		out.Agents = append(out.Agents, o)
	}
	return out, nil
}
