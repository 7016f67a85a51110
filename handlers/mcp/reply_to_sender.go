package mcp

import (
	"context"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// reply_to_sender is post_session_note addressed to one sender: the same
// fields and the same idempotency, plus to, and optionally the note it
// answers (store.AgentNote.InReplyTo).
var replyToSenderSchema = noteSchema(property{"to", text()}).optional(property{"in_reply_to", noteID()})

type replyArgs struct {
	postNoteArgs
	To        string `json:"to"`
	InReplyTo int64  `json:"in_reply_to"`
}

func (h *Handler) addReplyToSender() {
	addTool(h, store.ScopeWrite, &mcpsdk.Tool{
		Name:        "reply_to_sender",
		Description: "post_session_note to one sender (to: a from of read_session_mail; in_reply_to its id), seen by them and the owners.",
		InputSchema: replyToSenderSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)},
	}, h.replyToSender)
}

func (h *Handler) replyToSender(ctx context.Context, c *caller, in replyArgs) (any, error) {
	return h.postNote(ctx, c, in.postNoteArgs, in.To, in.InReplyTo)
}
