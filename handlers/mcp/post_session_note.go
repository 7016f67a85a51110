package mcp

import (
	"context"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// The schema SPEC §3 fixes; the 1–200 length of idempotency_key is checked
// by the store.
var postSessionNoteSchema = object{
	properties: append(sessionProps("session_type", "session_id"),
		property{"subject", textMax(store.MaxSubjectLen)},
		property{"body", textMax(store.MaxBodyLen)},
		property{"idempotency_key", text()}),
	required: []string{"session_type", "session_id", "subject", "body", "idempotency_key"},
}

type postNoteArgs struct {
	SessionType    string `json:"session_type"`
	SessionID      string `json:"session_id"`
	Subject        string `json:"subject"`
	Body           string `json:"body"`
	IdempotencyKey string `json:"idempotency_key"`
}

type postNoteOut struct {
	ID         int64  `json:"id"`
	SenderSlug string `json:"sender_slug"`
	Duplicate  bool   `json:"duplicate"`
}

func (h *Handler) addPostSessionNote() {
	addTool(h, store.ScopeWrite, &mcpsdk.Tool{
		Name: "post_session_note",
		Description: "Post what a person must read to a session's owners and participants. " +
			"Claim a profile first; invited sessions only. Retry with the same key.",
		InputSchema: postSessionNoteSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
	}, h.postSessionNote)
}

func (h *Handler) postSessionNote(ctx context.Context, c *caller, in postNoteArgs) (any, error) {
	n, dup, err := h.store.PostAgentNote(ctx, store.AgentNote{
		WorkspaceID: c.WorkspaceID, ConnectionID: c.ConnectionID,
		SessionType: in.SessionType, SessionID: in.SessionID,
		Subject: in.Subject, Body: in.Body, IdempotencyKey: in.IdempotencyKey,
	})
	if err != nil {
		return nil, err
	}
	return postNoteOut{ID: n.ID, SenderSlug: n.SenderSlug, Duplicate: dup}, nil
}
