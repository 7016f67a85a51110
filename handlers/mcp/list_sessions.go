package mcp

import (
	"context"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

type sessionOut struct {
	SessionType string `json:"session_type"`
	SessionID   string `json:"session_id"`
	Title       string `json:"title"`
	Project     string `json:"project"`
	Role        string `json:"role"`
}

func toSessionOut(s store.InvitedSession) sessionOut {
	return sessionOut{SessionType: s.Type, SessionID: s.PublicID, Title: s.Title, Project: s.ProjectName, Role: s.Role}
}

func (h *Handler) addListSessions() {
	addTool(h, store.ScopeRead, &mcpsdk.Tool{
		Name: "list_sessions",
		Description: "Sessions you are invited to, newest first, with your role (contributor or runner). " +
			"Only these can be read or posted to.",
		InputSchema: noArgs.raw(),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.listSessions)
}

func (h *Handler) listSessions(ctx context.Context, c *caller, _ map[string]any) (any, error) {
	list, err := h.store.ListInvitedSessions(ctx, c.WorkspaceID, c.ConnectionID)
	if err != nil {
		return nil, err
	}
	out := struct {
		Sessions []sessionOut `json:"sessions"`
	}{Sessions: make([]sessionOut, 0, len(list))}
	for _, s := range list {
		out.Sessions = append(out.Sessions, toSessionOut(s))
	}
	return out, nil
}
