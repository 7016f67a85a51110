package mcp

import (
	"context"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

var readSessionStateSchema = object{
	properties: sessionProps("session_type", "session_id"),
	required:   []string{"session_type", "session_id"},
}

// sessionRef is how agents address a session.
type sessionRef struct {
	SessionType string `json:"session_type"`
	SessionID   string `json:"session_id"`
}

type participantOut struct {
	Handle      *string `json:"handle"`
	DisplayName *string `json:"display_name"`
	SenderSlug  *string `json:"sender_slug"`
	Role        string  `json:"role"`
	Presence    string  `json:"presence"`
}

func (h *Handler) addReadSessionState() {
	addTool(h, store.ScopeRead, &mcpsdk.Tool{
		Name:        "read_session_state",
		Description: "Title, project, your role, participants with presence, last_sequence.",
		InputSchema: readSessionStateSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.readSessionState)
}

func (h *Handler) readSessionState(ctx context.Context, c *caller, in sessionRef) (any, error) {
	st, err := h.store.AsCaller(c.check).ReadSessionState(ctx, c.WorkspaceID, c.ConnectionID, in.SessionType, in.SessionID)
	if err != nil {
		return nil, err
	}
	out := struct {
		sessionOut
		LastSequence int64            `json:"last_sequence"`
		Participants []participantOut `json:"participants"`
	}{sessionOut: toSessionOut(st.InvitedSession), LastSequence: st.LastEventSeq, Participants: []participantOut{}}
	for _, p := range st.Participants {
		out.Participants = append(out.Participants, participantOut{Handle: p.Handle, DisplayName: p.DisplayName,
			SenderSlug: p.SenderSlug, Role: p.Role, Presence: p.Presence})
	}
	return out, nil
}
