package mcp

import (
	"context"
	"fmt"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// ask_owner asks the session's owners to decide something: with options (0
// to 5; none asks for free text), an urgency, and a wait for the answer of
// up to MaxWaitSeconds. The idempotency key is post_session_note's, in the
// same key space.
var askOwnerSchema = object{
	properties: append(sessionProps("session_type", "session_id"),
		property{"question", textBetween(1, store.MaxQuestionLen)},
		property{"options", list(textBetween(1, store.MaxOptionLen), store.MaxOptions)},
		property{"urgency", oneOf(store.Urgencies, store.UrgencyNormal)},
		property{"wait_seconds", integerBetween(0, MaxWaitSeconds, 0)},
		idempotencyKey),
	required: []string{"session_type", "session_id", "question", "idempotency_key"},
}

// MaxWaitSeconds bounds wait_seconds: how long one ask_owner call may hold
// its request open for the answer.
const MaxWaitSeconds = 600

// defaultProgressEvery is how often a waiting call looks at its question by
// itself (a lost notification costs at most this) and sends a progress
// notification when its client asked for them (Claude Code over HTTP cuts a
// call that sends nothing for 60 s).
const defaultProgressEvery = 15 * time.Second

type askArgs struct {
	SessionType    string   `json:"session_type"`
	SessionID      string   `json:"session_id"`
	Question       string   `json:"question"`
	Options        []string `json:"options"`
	Urgency        string   `json:"urgency"`
	WaitSeconds    int      `json:"wait_seconds"`
	IdempotencyKey string   `json:"idempotency_key"`
}

// askOut is ask_owner's result: the question and where it stands.
type askOut struct {
	QuestionID int64  `json:"question_id"`
	Status     string `json:"status"`
	// Answer, AnsweredBy (an owner's display name) and AnsweredAt once
	// answered.
	Answer     string     `json:"answer,omitempty"`
	AnsweredBy string     `json:"answered_by,omitempty"`
	AnsweredAt *time.Time `json:"answered_at,omitempty"`
	Duplicate  bool       `json:"duplicate"`
	// WaitNotHeld says why a call that asked to wait answered at once: a
	// limit of WaitLimits was reached.
	WaitNotHeld string `json:"wait_not_held,omitempty"`
}

// lines say what an unanswered question means: nothing is decided.
func (o askOut) lines() []string {
	if o.WaitNotHeld != "" {
		return []string{o.WaitNotHeld}
	}
	switch o.Status {
	case store.QuestionOpen:
		return []string{"No answer yet, so nothing is decided. The answer will come as unread mail (read_session_mail)."}
	case store.QuestionExpired:
		return []string{"Expired unanswered: no decision. Do not take silence as consent."}
	}
	return nil
}

func (h *Handler) addAskOwner() {
	addTool(h, store.ScopeWrite, &mcpsdk.Tool{
		Name:        "ask_owner",
		Description: "The session's owners decide (no options: free text); no decision yet, it comes later as mail.",
		InputSchema: askOwnerSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)},
	}, h.askOwner)
}

func (h *Handler) askOwner(ctx context.Context, c *caller, in askArgs) (any, error) {
	q, dup, err := h.store.AsCaller(c.check).AskQuestion(ctx, store.AgentQuestion{WorkspaceID: c.WorkspaceID, ConnectionID: c.ConnectionID,
		SessionType: in.SessionType, SessionID: in.SessionID, Text: in.Question, Options: in.Options, Urgency: in.Urgency,
		IdempotencyKey: in.IdempotencyKey})
	if err != nil {
		return nil, err
	}
	notHeld := ""
	if in.WaitSeconds > 0 && q.Open() {
		if refused := h.waitSlots.take(c.ConnectionID); refused != "" {
			notHeld = waitNotHeld(refused)
		} else {
			q, err = h.awaitAnswer(ctx, c, q, time.Duration(in.WaitSeconds)*time.Second)
			h.waitSlots.release(c.ConnectionID)
			if err != nil {
				return nil, err
			}
		}
	}
	out := askOut{QuestionID: q.ID, Status: q.State, Duplicate: dup, WaitNotHeld: notHeld}
	if q.State == store.QuestionAnswered {
		out.Answer, out.AnsweredBy, out.AnsweredAt = q.Answer, q.AnsweredBy, q.ClosedAt
	}
	return out, nil
}

// awaitAnswer holds the call until the question closes, on any replica, or
// wait has passed, and returns the question as it then stands: open at the
// deadline (never a made-up answer). It looks when a notification says the
// question may have closed, every progressEvery by itself, and at the
// deadline; a server that stops ends the wait early with what it knows.
func (h *Handler) awaitAnswer(ctx context.Context, c *caller, q *store.Question, wait time.Duration) (*store.Question, error) {
	w := h.waits.Watch(q.ID)
	defer w.Stop()
	start := time.Now()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(h.progressEvery)
	defer tick.Stop()
	report := progressFrom(ctx)
	for {
		// Looked at after the wait began, so no answer falls between.
		cur, err := h.store.AgentQuestion(ctx, c.WorkspaceID, c.ConnectionID, q.ID)
		if err != nil {
			return nil, err
		}
		if !cur.Open() {
			return cur, nil
		}
		select {
		case <-w.C:
		case <-tick.C:
			report(ctx, time.Since(start), wait)
		case <-deadline.C:
			return h.store.AgentQuestion(ctx, c.WorkspaceID, c.ConnectionID, q.ID)
		case <-h.waits.Ending():
			return cur, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// progressFunc reports how long a call has waited of how long it may.
type progressFunc func(ctx context.Context, waited, of time.Duration)

// progressKey carries a call's progressFunc.
type progressKey struct{}

// withProgress makes the tool's progress reports notifications/progress to
// the client of req, when it sent a progress token; the SDK's handler in
// event-stream mode sends them on the call's own response.
func withProgress(ctx context.Context, req *mcpsdk.CallToolRequest) context.Context {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, progressFunc(func(ctx context.Context, waited, of time.Duration) {
		_ = req.Session.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{ProgressToken: token,
			Progress: waited.Seconds(), Total: of.Seconds(),
			Message: fmt.Sprintf("waiting for an owner's answer: %d of %d s", int(waited.Seconds()), int(of.Seconds()))})
	}))
}

// progressFrom returns the call's progressFunc; one that reports nothing
// when its client asked for none.
func progressFrom(ctx context.Context) progressFunc {
	if f, ok := ctx.Value(progressKey{}).(progressFunc); ok {
		return f
	}
	return func(context.Context, time.Duration, time.Duration) {}
}
