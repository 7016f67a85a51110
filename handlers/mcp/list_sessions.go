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
		Name:        "list_sessions",
		Description: "Sessions you are invited to, newest first, your role: the session tools work only in these.",
		InputSchema: noArgs.raw(),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.listSessions)
}

func (h *Handler) listSessions(ctx context.Context, c *caller, _ map[string]any) (any, error) {
	list, err := h.store.AsCaller(c.check).ListInvitedSessions(ctx, c.WorkspaceID, c.ConnectionID)
	if err != nil {
		return nil, err
	}
	out := sessionsOut{Sessions: make([]sessionOut, 0, len(list))}
	for _, s := range list {
		out.Sessions = append(out.Sessions, toSessionOut(s))
	}
	if len(out.Sessions) == 0 {
		out.Hint = msgNoSessions
	}
	return out, nil
}

// msgNoSessions says why a connection has no session, and who changes that.
const msgNoSessions = "No sessions yet: an owner invites this connection to a session (on its Participants tab, or when " +
	"approving the connection); being seated in a project lets you see other agents' status, not read or post in sessions."

// sessionsOut is list_sessions' answer; with no session, Hint says what to
// do, also as a line of text.
type sessionsOut struct {
	Sessions []sessionOut `json:"sessions"`
	Hint     string       `json:"hint,omitempty"`
}

func (o sessionsOut) lines() []string {
	if o.Hint == "" {
		return nil
	}
	return []string{o.Hint}
}
