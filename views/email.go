package views

import "time"

// MailLink is a link of an email: what it says and where it goes.
type MailLink struct {
	Label string
	URL   string
}

// QuestionMailData is what a question's email says: who asked what where,
// and the links that answer it.
type QuestionMailData struct {
	Reminder bool
	Blocking bool
	Session  string
	Project  string
	// Asker is the agent that asked, by name and sender slug.
	Asker, AskerSlug string
	Question         string
	// Options are the links that answer with each option; Free the one for
	// an answer in the owner's own words.
	Options []MailLink
	Free    string
	// QuestionURL is the question on its session page; AccountURL where the
	// owner chooses what mails them.
	QuestionURL, AccountURL string
	LinksExpire             time.Time
}

// ReplyMailData is what the email of a reply to an owner says.
type ReplyMailData struct {
	From, Session, Project string
	Subject, Body          string
	URL, AccountURL        string
}

// DigestItem is one unread note of a digest.
type DigestItem struct {
	From, Session, Project string
	Subject, FirstLine     string
	URL                    string
}

// DigestMailData is what an owner's daily digest says.
type DigestMailData struct {
	Items                []DigestItem
	InboxURL, AccountURL string
}
