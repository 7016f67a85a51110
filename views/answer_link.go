package views

import "github.com/osfoundry/osfoundry/store"

// AnswerLinkData is an answer link's page: the question, where, by whom.
type AnswerLinkData struct {
	// Token is the link's, for the form's action.
	Token    string
	Link     *store.AnswerLink
	Question *store.Question
	// Session, Project and Asker say where and by which agent.
	Session, Project, Asker string
	// CanAnswer: the link is valid, unused and unexpired, and the question open.
	CanAnswer bool
	// Answered: this request answered it.
	Answered bool
	// Notice says why the link cannot answer; Error what is wrong with the answer.
	Notice, Error string
	// Text is the free-text answer as given, shown again with Error.
	Text string
	// SignedInAs names this browser's owner when not the link's.
	SignedInAs string
}

// answerLinkURL is where an answer link's page is and posts to.
func answerLinkURL(token string) string { return "/answer/" + token }

// option is the option the link answers with ("" for a free-text link).
func (d AnswerLinkData) option() string {
	if d.Link == nil || d.Link.Option == nil || d.Question == nil || *d.Link.Option >= len(d.Question.Options) {
		return ""
	}
	return d.Question.Options[*d.Link.Option]
}
