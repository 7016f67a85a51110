package mcp

import (
	"context"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// post_session_note's five fields are fixed by the product: no recipient
// (reply_to_sender is the reply).
var postSessionNoteSchema = noteSchema()

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
		Name:        "post_session_note",
		Description: "To a session's owners and participants: what a person must read. Retry with the same key.",
		InputSchema: postSessionNoteSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)},
	}, h.postSessionNote)
}

func (h *Handler) postSessionNote(ctx context.Context, c *caller, in postNoteArgs) (any, error) {
	return h.postNote(ctx, c, in, "", 0)
}

// postNote posts the note as the caller, to the whole session (to "") or to
// one sender in answer to a note (inReplyTo, 0 for none), and answers what
// both writing tools return.
func (h *Handler) postNote(ctx context.Context, c *caller, in postNoteArgs, to string, inReplyTo int64) (any, error) {
	n, dup, err := h.store.AsCaller(c.check).PostAgentNote(ctx, store.AgentNote{
		WorkspaceID: c.WorkspaceID, ConnectionID: c.ConnectionID,
		SessionType: in.SessionType, SessionID: in.SessionID, To: to, InReplyTo: inReplyTo,
		Subject: in.Subject, Body: in.Body, IdempotencyKey: in.IdempotencyKey,
	})
	if err != nil {
		return nil, err
	}
	return postNoteOut{ID: n.ID, SenderSlug: n.SenderSlug, Duplicate: dup}, nil
}
