package mcp

import (
	"context"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// defaultMailLimit is the page size when limit is omitted.
const defaultMailLimit = 10

var readSessionMailSchema = object{
	properties: append(sessionProps("session_type", "session_id"),
		property{"before_id", integerMin(1)},
		property{"limit", pageLimit(store.MaxMailPage, defaultMailLimit)}),
	required: []string{"session_type", "session_id"},
}

type readMailArgs struct {
	SessionType string `json:"session_type"`
	SessionID   string `json:"session_id"`
	BeforeID    int64  `json:"before_id"`
	Limit       int    `json:"limit"`
}

type noteOut struct {
	ID          int64     `json:"id"`
	From        string    `json:"from"`
	FromName    string    `json:"from_name"`
	FromKind    string    `json:"from_kind"` // "owner" or store.AgentLabel
	To          *string   `json:"to"`        // null: the whole session
	MessageType string    `json:"message_type"`
	Subject     string    `json:"subject"`
	Body        string    `json:"body"`
	CreatedAt   time.Time `json:"created_at"`
	// InReplyTo is the note this one answers; absent when none.
	InReplyTo *int64 `json:"in_reply_to,omitempty"`
	// ForYou marks a note addressed to the caller (a reply to its slug, or an
	// owner's note to the whole session): what the unread hint counts. The
	// others (its own, other agents' notes to all) leave it out.
	ForYou bool `json:"for_you,omitempty"`
}

type mailOut struct {
	Notes []noteOut `json:"notes"`
	// NextBeforeID is the before_id of the next older page; absent on the last page.
	NextBeforeID *int64 `json:"next_before_id,omitempty"`
}

func (h *Handler) addReadSessionMail() {
	addTool(h, store.ScopeRead, &mcpsdk.Tool{
		Name: "read_session_mail",
		Description: "Mail to you, to all and from you, newest first; " +
			"page back with next_before_id until an id you have seen; clears unread.",
		InputSchema: readSessionMailSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.readSessionMail)
	h.registry["read_session_mail"].ownsUnread = true
}

func (h *Handler) readSessionMail(ctx context.Context, c *caller, in readMailArgs) (any, error) {
	if in.Limit == 0 {
		in.Limit = defaultMailLimit
	}
	notes, unread, err := h.store.ReadAgentMail(ctx, c.WorkspaceID, c.ConnectionID, in.SessionType, in.SessionID, in.BeforeID, in.Limit)
	if err != nil {
		return nil, err
	}
	c.Unread = unread // what remains unread after this page
	out := mailOut{Notes: make([]noteOut, 0, len(notes))}
	if len(notes) > in.Limit {
		notes = notes[:in.Limit]
		next := notes[len(notes)-1].ID
		out.NextBeforeID = &next
	}
	for _, n := range notes {
		out.Notes = append(out.Notes, toNoteOut(n))
	}
	return out, nil
}

func toNoteOut(n store.AgentMailNote) noteOut {
	kind := string(store.SenderOwner)
	if n.FromAgent() {
		kind = store.AgentLabel
	}
	return noteOut{ID: n.ID, From: n.SenderSlug, FromName: n.SenderName, FromKind: kind, To: n.RecipientSlug,
		MessageType: n.MessageType, Subject: n.Subject, Body: n.Body, CreatedAt: n.CreatedAt, InReplyTo: n.InReplyTo, ForYou: n.Addressed}
}
