package push

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// Payload is what the service worker (static/sw.js) reads; a later push with the
// same Tag replaces its notification. Never more of a note than one line.
type Payload struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	Tag   string `json:"tag"`
	URL   string `json:"url"`
	// Actions are a question's options; AnswerURL is where one answers.
	Actions   []Action `json:"actions,omitempty"`
	AnswerURL string   `json:"answer_url,omitempty"`
	// AnswerField is "option" (the default) or "verdict" (an approval's).
	AnswerField string `json:"answer_field,omitempty"`
	// Silent updates what the device shows, without ringing.
	Silent bool `json:"silent,omitempty"`
}

// Action is a button: an option's index, or an approval's verdict.
type Action struct {
	Action string `json:"action"`
	Title  string `json:"title"`
}

// Limits of a payload, in characters.
const (
	MaxTitle = 80
	MaxLine  = 120
	// MaxActions is the most buttons a platform shows; the worker trims to the
	// device's Notification.maxActions.
	MaxActions = 3
)

// Compose is the payload of a claimed push.
func Compose(p *store.OutgoingPush) Payload {
	if p.Approval.ID != 0 {
		return composeApproval(p)
	}
	out := Payload{Tag: "note-" + strconv.FormatInt(p.NoteID, 10), URL: views.NoteURL(p.SessionID, p.NoteID)}
	switch p.Kind {
	case store.PushQuestion:
		out.Title = clip(p.SenderName+" asks in "+p.SessionTitle, MaxTitle)
		out.Body = OneLine(p.Body)
		for i, o := range p.Options {
			if i == MaxActions {
				break
			}
			out.Actions = append(out.Actions, Action{Action: strconv.Itoa(i), Title: clip(o, 40)})
		}
		if len(out.Actions) > 0 {
			out.AnswerURL = fmt.Sprintf("/sessions/%d/questions/%d/answer", p.SessionID, p.NoteID)
		}
	case store.PushClosed:
		out.Title, out.Silent = clip("No decision: the question expired", MaxTitle), true
		if p.QuestionState == store.QuestionAnswered {
			out.Title = clip(p.AnsweredBy+" answered: "+p.Answer, MaxTitle)
		}
		out.Body = OneLine(p.Body)
	default:
		out.Title = clip(p.SenderName+" replied in "+p.SessionTitle, MaxTitle)
		line := p.Subject
		if strings.TrimSpace(line) == "" {
			line = p.Body
		}
		out.Body = OneLine(line)
	}
	return out
}

// composeApproval asks with Allow and Deny, or once decided says how it ended,
// silently, under the same tag.
func composeApproval(p *store.OutgoingPush) Payload {
	a := &p.Approval
	id := strconv.FormatInt(a.ID, 10)
	out := Payload{Tag: "approval-" + id, URL: views.ApprovalHome(*a) + "#approval-" + id}
	line := OneLine(a.Summary)
	if line == "" {
		line = clip(a.Tool, MaxLine)
	}
	out.Body = line
	if p.Kind != store.PushClosed {
		out.Title = clip(a.Headline(), MaxTitle)
		out.Actions = []Action{{Action: "allow", Title: "Allow"}, {Action: "deny", Title: "Deny"}}
		out.AnswerURL, out.AnswerField = "/approvals/"+id+"/decide", "verdict"
		return out
	}
	out.Silent = true
	switch a.State {
	case store.ApprovalAllowed:
		out.Title = clip(a.DecidedBy+" allowed "+a.Who()+" to use "+a.Tool, MaxTitle)
	case store.ApprovalDenied:
		out.Title = clip(a.DecidedBy+" denied "+a.Who()+" the use of "+a.Tool, MaxTitle)
	case store.ApprovalTerminal:
		out.Title = clip("Answered at the terminal: "+a.Tool, MaxTitle)
	default:
		out.Title = clip("No decision: the approval expired", MaxTitle)
	}
	return out
}

// OneLine is the first non-blank line without Markdown marks, at most MaxLine.
func OneLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimLeft(strings.TrimSpace(line), "#>*-+ \t")
		if line != "" {
			return clip(line, MaxLine)
		}
	}
	return ""
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
