package mcp

import (
	"context"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// reply_to_sender is post_session_note addressed to one sender: the same
// fields and the same idempotency, plus to. As there, the 1–200 length of
// idempotency_key is checked by the store.
var replyToSenderSchema = object{
	properties: append(sessionProps("session_type", "session_id"),
		property{"to", text()},
		property{"subject", textMax(store.MaxSubjectLen)},
		property{"body", textMax(store.MaxBodyLen)},
		property{"idempotency_key", text()}),
	required: []string{"session_type", "session_id", "to", "subject", "body", "idempotency_key"},
}

type replyArgs struct {
	postNoteArgs
	To string `json:"to"`
}

func (h *Handler) addReplyToSender() {
	addTool(h, store.ScopeWrite, &mcpsdk.Tool{
		Name: "reply_to_sender",
		Description: "Reply to one sender (to: a from of read_session_mail); seen by them and the owners. " +
			"Claim a profile first; invited sessions only. Retry with the same key.",
		InputSchema: replyToSenderSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
	}, h.replyToSender)
}

func (h *Handler) replyToSender(ctx context.Context, c *caller, in replyArgs) (any, error) {
	n, dup, err := h.store.PostAgentNote(ctx, store.AgentNote{
		WorkspaceID: c.WorkspaceID, ConnectionID: c.ConnectionID,
		SessionType: in.SessionType, SessionID: in.SessionID, To: in.To,
		Subject: in.Subject, Body: in.Body, IdempotencyKey: in.IdempotencyKey,
	})
	if err != nil {
		return nil, err
	}
	return postNoteOut{ID: n.ID, SenderSlug: n.SenderSlug, Duplicate: dup}, nil
}
