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
		property{"before_id", noteID()},
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
	// DeliveredAt is when osFoundry put the note into your context (a hook
	// or a channel) before this read; absent when it never did.
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`

	// A question (message_type "question") carries its options and where
	// it stands: status open, answered (with answer, answered_by and
	// answered_at) or expired.
	Options    []string   `json:"options,omitempty"`
	Status     string     `json:"status,omitempty"`
	Answer     string     `json:"answer,omitempty"`
	AnsweredBy string     `json:"answered_by,omitempty"`
	AnsweredAt *time.Time `json:"answered_at,omitempty"`
	// Answers is the question a note closed: an owner's answer, or
	// osFoundry's notice that nobody answered (status expired).
	Answers *answersOut `json:"answers,omitempty"`
}

// answersOut names the question a note closed.
type answersOut struct {
	QuestionID int64  `json:"question_id"`
	Question   string `json:"question"`
	Status     string `json:"status"`
}

// approvalOut is one of the caller's permission prompts in the session and
// where it stands (pending, allowed, denied, expired, terminal).
type approvalOut struct {
	ApprovalID int64      `json:"approval_id"`
	Tool       string     `json:"tool"`
	Summary    string     `json:"summary"`
	State      string     `json:"state"`
	Reason     string     `json:"reason,omitempty"`
	DecidedBy  string     `json:"decided_by,omitempty"`
	DecidedAt  *time.Time `json:"decided_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
}

type mailOut struct {
	Notes []noteOut `json:"notes"`
	// Approvals are the caller's approvals of the last day in the session,
	// on the first page only.
	Approvals []approvalOut `json:"approvals,omitempty"`
	// NextBeforeID is the before_id of the next older page; absent on the last page.
	NextBeforeID *int64 `json:"next_before_id,omitempty"`
}

func (h *Handler) addReadSessionMail() {
	addTool(h, store.ScopeRead, &mcpsdk.Tool{
		Name: "read_session_mail",
		Description: "Mail to you, to all and from you, newest first; " +
			"page with next_before_id until an id you have seen; clears unread.",
		InputSchema: readSessionMailSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.readSessionMail)
	h.registry["read_session_mail"].ownsUnread = true
}

func (h *Handler) readSessionMail(ctx context.Context, c *caller, in readMailArgs) (any, error) {
	if in.Limit == 0 {
		in.Limit = defaultMailLimit
	}
	notes, unread, err := h.store.AsCaller(c.check).ReadAgentMail(ctx, c.WorkspaceID, c.ConnectionID, in.SessionType, in.SessionID, in.BeforeID, in.Limit)
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
	questions, err := h.questionsOf(ctx, c.WorkspaceID, notes)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		out.Notes = append(out.Notes, toNoteOut(n, questions))
	}
	if in.BeforeID == 0 {
		as, err := h.store.AgentSessionApprovals(ctx, c.WorkspaceID, c.ConnectionID, in.SessionType, in.SessionID, maxMailApprovals)
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			state := a.State
			if a.Pending() && !a.ExpiresAt.After(time.Now()) {
				state = store.ApprovalExpired
			}
			out.Approvals = append(out.Approvals, approvalOut{ApprovalID: a.ID, Tool: a.Tool, Summary: a.Summary, State: state,
				Reason: a.Reason, DecidedBy: a.DecidedBy, DecidedAt: a.DecidedAt, CreatedAt: a.CreatedAt})
		}
	}
	return out, nil
}

// maxMailApprovals bounds the approvals read_session_mail carries.
const maxMailApprovals = 5

// questionsOf loads the questions a page of mail holds or may close, in one
// statement, only when it holds a question or a reply to the caller from an
// owner or osFoundry (what closes a question): other pages cost nothing more.
func (h *Handler) questionsOf(ctx context.Context, workspaceID int64, notes []store.AgentMailNote) (map[int64]*store.Question, error) {
	var ids []int64
	for _, n := range notes {
		switch {
		case n.MessageType == store.MessageQuestion:
			ids = append(ids, n.ID)
		case n.InReplyTo != nil && n.Addressed && !n.FromAgent():
			ids = append(ids, *n.InReplyTo)
		}
	}
	return h.store.QuestionsOf(ctx, workspaceID, ids)
}

// senderKind is a note's from_kind: "owner", store.AgentLabel, or
// "osfoundry" for osFoundry's own notes.
func senderKind(n *store.Note) string {
	switch n.SenderKind {
	case store.SenderAgent:
		return store.AgentLabel
	case store.SenderSystem:
		return store.SystemSlug
	}
	return string(store.SenderOwner)
}

func toNoteOut(n store.AgentMailNote, questions map[int64]*store.Question) noteOut {
	out := noteOut{ID: n.ID, From: n.SenderSlug, FromName: n.SenderName, FromKind: senderKind(&n.Note), To: n.RecipientSlug,
		MessageType: n.MessageType, Subject: n.Subject, Body: n.Body, CreatedAt: n.CreatedAt, InReplyTo: n.InReplyTo, ForYou: n.Addressed, DeliveredAt: n.DeliveredAt}
	if q := questions[n.ID]; q != nil && n.MessageType == store.MessageQuestion {
		out.Options, out.Status = q.Options, q.State
		if q.State == store.QuestionAnswered {
			out.Answer, out.AnsweredBy, out.AnsweredAt = q.Answer, q.AnsweredBy, q.ClosedAt
		}
	}
	if n.InReplyTo != nil {
		if q := questions[*n.InReplyTo]; q != nil && q.ClosedBy != nil && *q.ClosedBy == n.ID {
			out.Answers = &answersOut{QuestionID: q.ID, Question: q.Text, Status: q.State}
		}
	}
	return out
}
