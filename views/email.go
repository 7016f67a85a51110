package views

import "time"

// EmailLink is a link of an email: what it says and where it goes.
type EmailLink struct {
	Label string
	URL   string
}

// QuestionEmailData is a question's email: who asked what where, and its links.
type QuestionEmailData struct {
	Reminder bool
	Blocking bool
	Session  string
	Project  string
	// Asker is the agent that asked, by name and sender slug.
	Asker, AskerSlug string
	Question         string
	// Options answer with each option; Free in the owner's own words.
	Options                 []EmailLink
	Free                    string
	QuestionURL, AccountURL string
	LinksExpire             time.Time
}

// ReplyEmailData is what the email of a reply to an owner says.
type ReplyEmailData struct {
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

// DigestEmailData is what an owner's daily digest says.
type DigestEmailData struct {
	Items                []DigestItem
	InboxURL, AccountURL string
}
