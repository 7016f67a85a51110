package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// Event types of the JSON body.
const (
	EventNotePosted = "note.posted"
	EventTest       = "webhook.test"
	// EventQuestionAsked is a question unanswered within its delay; EventQuestionReminder its reminder.
	EventQuestionAsked    = "question.asked"
	EventQuestionReminder = "question.reminder"
	// EventApprovalRequested is a permission prompt undecided within its delay.
	EventApprovalRequested = "approval.requested"
)

// Event is the JSON body of a delivery to a json endpoint.
type Event struct {
	Type string `json:"type"`
	// Timestamp is when it happened: the note's creation, or the test's.
	Timestamp time.Time     `json:"timestamp"`
	Note      *EventNote    `json:"note,omitempty"`
	Session   *EventSession `json:"session,omitempty"`
	Project   EventProject  `json:"project"`
	Links     EventLinks    `json:"links"`
	// Question is the question of a question event (Note is its note).
	Question *EventQuestion `json:"question,omitempty"`
	// Approval is the approval of an approval event (no note).
	Approval *EventApproval `json:"approval,omitempty"`
	// Message explains a test delivery.
	Message string `json:"message,omitempty"`
}

// EventQuestion is the question, its options (none: free text), urgency and expiry.
type EventQuestion struct {
	ID        int64     `json:"id"`
	Question  string    `json:"question"`
	Options   []string  `json:"options"`
	Urgency   string    `json:"urgency"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
}

// EventApproval is a prompt awaiting a decision; Summary is the agent's untrusted text.
type EventApproval struct {
	ID        int64     `json:"id"`
	Tool      string    `json:"tool"`
	Summary   string    `json:"summary"`
	Agent     string    `json:"agent"`
	Repo      string    `json:"repo,omitempty"`
	Branch    string    `json:"branch,omitempty"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
}

// EventNote is the note of a note.posted event.
type EventNote struct {
	ID          int64       `json:"id"`
	MessageType string      `json:"message_type"`
	Subject     string      `json:"subject"`
	Body        string      `json:"body"`
	Sender      EventSender `json:"sender"`
	// Recipient is the sender slug a reply is addressed to; null for the whole session.
	Recipient *string   `json:"recipient"`
	CreatedAt time.Time `json:"created_at"`
}

// EventSender is who wrote a note.
type EventSender struct {
	Kind string `json:"kind"` // "agent" or "owner"
	Slug string `json:"slug"`
	Name string `json:"name"`
	// Label is "outside assistant" on agents' notes, as the web app shows it.
	Label string `json:"label,omitempty"`
}

// EventSession is the session a note was posted in.
type EventSession struct {
	// ID is the web app's number for it (its page is /sessions/<id>).
	ID int64 `json:"id"`
	// SessionType and SessionID are how agents address it.
	SessionType string `json:"session_type"`
	SessionID   string `json:"session_id"`
	Title       string `json:"title"`
}

// EventProject is the project whose webhook fired.
type EventProject struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// EventLinks are web app pages about the event.
type EventLinks struct {
	Session string `json:"session,omitempty"`
	// Question is the question in its session, where it is answered.
	Question string `json:"question,omitempty"`
	// Approval is the page where the approval is allowed or denied.
	Approval string `json:"approval,omitempty"`
	Project  string `json:"project"`
	Webhook  string `json:"webhook,omitempty"`
}

// testMessage is the text of a test delivery.
const testMessage = "A test delivery from osFoundry: this endpoint is set up."

// event builds the JSON event of a claimed delivery.
func event(d *store.DueWebhook, baseURL string) Event {
	ev := Event{
		Project: EventProject{ID: d.ProjectID, Name: d.ProjectName},
		Links:   EventLinks{Project: fmt.Sprintf("%s/projects/%d", baseURL, d.ProjectID)},
	}
	if a := d.Approval; a != nil {
		ev.Type, ev.Timestamp = EventApprovalRequested, d.CreatedAt.UTC()
		ev.Approval = &EventApproval{ID: a.ID, Tool: a.Tool, Summary: a.Summary, Agent: a.Who(), Repo: a.Repo, Branch: a.Branch,
			Status: a.State, ExpiresAt: a.ExpiresAt.UTC()}
		ev.Links.Approval = baseURL + "/inbox"
		if a.SessionID != nil {
			ev.Session = &EventSession{ID: *a.SessionID, SessionType: a.SessionType, SessionID: a.SessionPublicID, Title: a.SessionTitle}
			ev.Links.Session = fmt.Sprintf("%s/sessions/%d", baseURL, *a.SessionID)
			ev.Links.Approval = ev.Links.Session
		}
		return ev
	}
	if d.Note == nil {
		ev.Type, ev.Timestamp, ev.Message = EventTest, d.CreatedAt.UTC(), testMessage
		ev.Links.Webhook = fmt.Sprintf("%s/projects/%d/webhooks/%d", baseURL, d.ProjectID, d.EndpointID)
		return ev
	}
	n := d.Note
	ev.Type, ev.Timestamp = EventNotePosted, n.CreatedAt.UTC()
	ev.Note = &EventNote{ID: n.ID, MessageType: n.MessageType, Subject: n.Subject, Body: n.Body,
		Sender:    EventSender{Kind: string(n.SenderKind), Slug: n.SenderSlug, Name: n.SenderName},
		Recipient: n.RecipientSlug, CreatedAt: n.CreatedAt.UTC()}
	if n.FromAgent() {
		ev.Note.Sender.Label = store.AgentLabel
	}
	ev.Session = &EventSession{ID: d.Session.ID, SessionType: d.Session.Type, SessionID: d.Session.PublicID, Title: d.Session.Title}
	ev.Links.Session = fmt.Sprintf("%s/sessions/%d", baseURL, d.Session.ID)
	if q := d.Question; q != nil {
		ev.Type, ev.Timestamp = EventQuestionAsked, d.CreatedAt.UTC()
		if d.Event == "reminder" {
			ev.Type = EventQuestionReminder
		}
		ev.Question = &EventQuestion{ID: q.ID, Question: q.Text, Options: q.Options, Urgency: q.Urgency, Status: q.State, ExpiresAt: q.ExpiresAt.UTC()}
		ev.Links.Question = baseURL + views.NoteURL(d.Session.ID, q.ID)
	}
	return ev
}

// slackPreview bounds the note body in a Slack-compatible message.
const slackPreview = 1000

// slackText ends with the session's URL alone on a line, which Slack, Mattermost,
// Rocket.Chat and Discord all link.
func slackText(ev Event) string {
	if ev.Approval != nil {
		return slackApproval(ev)
	}
	if ev.Note == nil {
		return fmt.Sprintf("*osFoundry test* for %s: this endpoint is set up.\n%s", slackEscape(ev.Project.Name), ev.Links.Webhook)
	}
	if ev.Question != nil {
		return slackQuestion(ev)
	}
	n := ev.Note
	subject := n.Subject
	if strings.TrimSpace(subject) == "" {
		subject = "(no subject)"
	}
	who := slackEscape(n.Sender.Name)
	if n.Sender.Label != "" {
		who += " (" + n.Sender.Label + ")"
	}
	if n.MessageType == store.MessageReply && n.Recipient != nil {
		who += " replied to " + slackEscape(*n.Recipient)
	}
	body := n.Body
	if r := []rune(body); len(r) > slackPreview {
		body = string(r[:slackPreview]) + "…"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%s*\n%s in %s · %s\n", slackEscape(subject), who, slackEscape(ev.Session.Title), slackEscape(ev.Project.Name))
	if strings.TrimSpace(body) != "" {
		b.WriteString(slackEscape(body) + "\n")
	}
	b.WriteString("Open the session: " + ev.Links.Session)
	return b.String()
}

// slackQuestion is a question event's chat text, with a link to answer it.
func slackQuestion(ev Event) string {
	q := ev.Question
	head := "*Question waiting for an answer*"
	switch {
	case ev.Type == EventQuestionReminder:
		head = "*Reminder: a question is still waiting for an answer*"
	case q.Urgency == store.UrgencyBlocking:
		head = "*Blocking question: the agent waits for your decision*"
	}
	text := q.Question
	if r := []rune(text); len(r) > slackPreview {
		text = string(r[:slackPreview]) + "…"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s (%s) asks in %s · %s:\n%s\n", head, slackEscape(ev.Note.Sender.Name), store.AgentLabel,
		slackEscape(ev.Session.Title), slackEscape(ev.Project.Name), slackEscape(text))
	if len(q.Options) > 0 {
		b.WriteString("Options:\n")
		for i, o := range q.Options {
			fmt.Fprintf(&b, "%d. %s\n", i+1, slackEscape(o))
		}
	} else {
		b.WriteString("Answer in your own words.\n")
	}
	fmt.Fprintf(&b, "Expires with no decision at %s.\n", q.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC"))
	b.WriteString("Answer it: " + ev.Links.Question)
	return b.String()
}

// slackApproval is an approval event's chat text, with a link to decide it.
func slackApproval(ev Event) string {
	a := ev.Approval
	var b strings.Builder
	b.WriteString("*Approval waiting: an agent asks before a tool runs*\n")
	fmt.Fprintf(&b, "%s (%s) asks to use %s", slackEscape(a.Agent), store.AgentLabel, slackEscape(a.Tool))
	if w := strings.TrimSpace(a.Repo + " " + a.Branch); w != "" {
		b.WriteString(" in " + slackEscape(w))
	}
	b.WriteString(" · " + slackEscape(ev.Project.Name) + "\n")
	if a.Summary != "" {
		b.WriteString("`" + slackEscape(strings.ReplaceAll(a.Summary, "`", "'")) + "`\n")
	}
	fmt.Fprintf(&b, "Without a decision by %s the agent gets none (never an allow).\n", a.ExpiresAt.UTC().Format("15:04:05 UTC"))
	b.WriteString("Allow or deny it: " + ev.Links.Approval)
	return b.String()
}

// slackEscape makes agents' and owners' text inert in any Slack-compatible chat:
// Slack's three reserved characters are escaped (no forged <!channel>); a
// zero-width space follows each word-starting @ (no one is pinged) and each ] of
// a Markdown link or image (no masked link, no tracking pixel).
func slackEscape(s string) string {
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	prev := rune(-1) // the rune before, -1 at the start
	rs := []rune(s)
	for i, r := range rs {
		b.WriteRune(r)
		var next rune = -1
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case r == '@' && !inWord(prev) && (inWord(next) || next == '@'):
			b.WriteRune(zeroWidthSpace)
		case r == ']' && (next == '(' || next == '[' || next == ':'):
			b.WriteRune(zeroWidthSpace)
		}
		prev = r
	}
	return b.String()
}

// zeroWidthSpace breaks the markup it is put into without showing.
const zeroWidthSpace = '\u200b'

// inWord is a letter, digit or underscore: an email's @ inside a word is left alone.
func inWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// body is compact JSON without HTML escaping (nothing here lands in a page).
func body(d *store.DueWebhook, baseURL string) ([]byte, error) {
	ev := event(d, baseURL)
	var v any = ev
	if d.Kind == store.WebhookSlack {
		v = map[string]string{"text": slackText(ev)}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
