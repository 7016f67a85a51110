package email

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// Composer writes the emails the store queues, linking to BaseURL.
type Composer struct {
	// BaseURL is the public origin, without a trailing slash.
	BaseURL string
}

// AnswerPath is the answer link's page, before its token.
const AnswerPath = "/answer/"

// AnswerURL is the page an answer link opens.
func (c Composer) AnswerURL(token string) string { return c.BaseURL + AnswerPath + token }

func (c Composer) url(path string) string { return c.BaseURL + path }

// Question composes one question's email, or several folded into one; each
// item's links are one per option, then one for the owner's own words.
func (c Composer) Question(_ store.EmailTo, items []store.QuestionEmailItem) (store.Email, error) {
	if len(items) == 0 {
		return store.Email{}, fmt.Errorf("email: a question mail without questions")
	}
	var all []views.QuestionEmailData
	var t strings.Builder
	if len(items) > 1 {
		fmt.Fprintf(&t, "%d questions are waiting for your decision.\n\n", len(items))
	}
	for i, it := range items {
		d, err := c.questionData(it)
		if err != nil {
			return store.Email{}, err
		}
		if len(items) > 1 {
			fmt.Fprintf(&t, "-- Question %d of %d --\n\n", i+1, len(items))
		}
		questionText(&t, d)
		all = append(all, d)
	}
	q := items[0]
	if len(items) == 1 {
		subject := "Question from " + q.AskerName + ": " + oneLine(store.QuestionFirstLine(q.Text), 120)
		switch {
		case q.Reminder():
			subject = "Reminder: " + subject
		case q.Urgency == store.UrgencyBlocking:
			subject = "[blocking] " + subject
		}
		return c.mail(subject, t.String(), all[0].AccountURL, views.QuestionEmail(all[0]))
	}
	return c.mail(foldedSubject(items), t.String(), all[0].AccountURL, views.QuestionsEmail(all, all[0].AccountURL))
}

// questionData is what a question email says of one question.
func (c Composer) questionData(it store.QuestionEmailItem) (views.QuestionEmailData, error) {
	q, links := it.DueQuestion, it.Links
	if len(links) != len(q.Options)+1 {
		return views.QuestionEmailData{}, fmt.Errorf("email: question %d: %d answer links for %d options", q.ID, len(links), len(q.Options))
	}
	d := views.QuestionEmailData{
		Reminder: q.Reminder(), Blocking: q.Urgency == store.UrgencyBlocking,
		Session: q.SessionTitle, Project: q.ProjectName, Asker: q.AskerName, AskerSlug: q.AskerSlug, Question: q.Text,
		Free: c.AnswerURL(links[len(links)-1]), QuestionURL: c.url(views.NoteURL(q.SessionID, q.ID)), AccountURL: c.url("/account"),
		LinksExpire: time.Now().Add(store.AnswerLinkLifetime),
	}
	for i, o := range q.Options {
		d.Options = append(d.Options, views.EmailLink{Label: o, URL: c.AnswerURL(links[i])})
	}
	// A link cannot outlive its question.
	if !q.ExpiresAt.IsZero() && q.ExpiresAt.Before(d.LinksExpire) {
		d.LinksExpire = q.ExpiresAt
	}
	return d, nil
}

// questionText quotes each option's label, so that no label reads as a link.
func questionText(t *strings.Builder, d views.QuestionEmailData) {
	if d.Reminder {
		t.WriteString("Reminder: still waiting for your decision.\n\n")
	}
	fmt.Fprintf(t, "%s (%s) asks in %s · %s:\n\n", d.Asker, d.AskerSlug, d.Session, d.Project)
	for line := range strings.SplitSeq(d.Question, "\n") {
		t.WriteString("> " + line + "\n")
	}
	t.WriteString("\n")
	if len(d.Options) > 0 {
		t.WriteString("Answer with one click on the page each link opens:\n\n")
		for _, o := range d.Options {
			fmt.Fprintf(t, "- \"%s\"\n  %s\n", o.Label, o.URL)
		}
		fmt.Fprintf(t, "\nAnswer in your own words:\n  %s\n", d.Free)
	} else {
		fmt.Fprintf(t, "Write your answer:\n  %s\n", d.Free)
	}
	fmt.Fprintf(t, "\nSee it in its session:\n  %s\n\nThese links work once, until %s, and only for you: each asks for one more click before it answers.\n\n",
		d.QuestionURL, views.Exact(d.LinksExpire))
}

// foldedSubject is "3 questions from @ada", or from each agent that asked.
func foldedSubject(items []store.QuestionEmailItem) string {
	var askers []string
	blocking := false
	for _, it := range items {
		if a := "@" + strings.TrimPrefix(it.AskerSlug, "ext-"); !slices.Contains(askers, a) {
			askers = append(askers, a)
		}
		blocking = blocking || (it.Urgency == store.UrgencyBlocking && !it.Reminder())
	}
	subject := fmt.Sprintf("%d questions from %s", len(items), strings.Join(askers, ", "))
	if blocking {
		subject = "[blocking] " + subject
	}
	return oneLine(subject, 160)
}

// Reply composes the email of a reply to an owner.
func (c Composer) Reply(_ store.EmailTo, r store.ReplyToEmail) (store.Email, error) {
	d := views.ReplyEmailData{From: r.SenderName, Session: r.SessionTitle, Project: r.ProjectName, Subject: r.Subject, Body: r.Body,
		URL: c.url(views.NoteURL(r.SessionID, r.ID)), AccountURL: c.url("/account")}
	subject := "Reply from " + r.SenderName + ": " + oneLine(firstOf(r.Subject, views.FirstLine(r.Body, 120)), 120)
	var t strings.Builder
	fmt.Fprintf(&t, "%s replied to you in %s · %s:\n\n", r.SenderName, r.SessionTitle, r.ProjectName)
	if r.Subject != "" {
		t.WriteString(r.Subject + "\n\n")
	}
	t.WriteString(r.Body + "\n\nOpen it in its session:\n  " + d.URL + "\n")
	return c.mail(subject, t.String(), d.AccountURL, views.ReplyEmail(d))
}

// Digest composes an owner's daily digest of unread agents' notes.
func (c Composer) Digest(_ store.EmailTo, unread []store.InboxNote) (store.Email, error) {
	d := views.DigestEmailData{InboxURL: c.url("/inbox"), AccountURL: c.url("/account")}
	for _, n := range unread {
		d.Items = append(d.Items, views.DigestItem{From: n.SenderName, Session: n.SessionTitle, Project: n.ProjectName,
			Subject: n.Subject, FirstLine: views.FirstLine(n.Body, 120), URL: c.url(views.NoteURL(n.SessionID, n.ID))})
	}
	subject := fmt.Sprintf("%d unread %s from your agents", len(unread), plural(len(unread), "note", "notes"))
	var t strings.Builder
	t.WriteString("Unread notes from your agents:\n\n")
	for _, it := range d.Items {
		fmt.Fprintf(&t, "- %s\n  %s · %s · %s\n  %s\n", firstOf(it.Subject, it.FirstLine), it.From, it.Session, it.Project, it.URL)
	}
	t.WriteString("\nOpen your inbox:\n  " + d.InboxURL + "\n")
	return c.mail(subject, t.String(), d.AccountURL, views.DigestEmail(d))
}

// email renders the HTML body and adds the footer to the text.
func (c Composer) mail(subject, text, accountURL string, html templ.Component) (store.Email, error) {
	var b bytes.Buffer
	if err := html.Render(context.Background(), &b); err != nil {
		return store.Email{}, fmt.Errorf("email: render: %w", err)
	}
	text += "\n-- \nosFoundry · choose what mails you: " + accountURL + "\n"
	return store.Email{Subject: subject, Text: text, HTML: b.String()}, nil
}

// oneLine is s on one line (a subject cannot break), cut to max characters.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ApprovalPath is the approval link's page, before its token.
const ApprovalPath = "/approve/"

// Approval composes an approval's email with its Allow and Deny links.
func (c Composer) Approval(_ store.EmailTo, a *store.Approval, allow, deny string) (store.Email, error) {
	d := views.ApprovalEmailData{Approval: *a, AllowURL: c.url(ApprovalPath + allow), DenyURL: c.url(ApprovalPath + deny),
		PageURL: c.url(views.ApprovalHome(*a)), AccountURL: c.url("/account")}
	var t strings.Builder
	fmt.Fprintf(&t, "%s asks to use %s", a.Who(), a.Tool)
	if w := a.Where(); w != "" {
		t.WriteString(" in " + w)
	}
	t.WriteString(":\n\n")
	if a.Summary != "" {
		t.WriteString("> " + a.Summary + "\n\n")
	}
	fmt.Fprintf(&t, "Allow:\n  %s\nDeny:\n  %s\nOpen it in osFoundry:\n  %s\n\n", d.AllowURL, d.DenyURL, d.PageURL)
	fmt.Fprintf(&t, "Each link asks for one more click, works once and only while the agent waits (%s); without a decision the agent gets none, never an allow.\n",
		views.Exact(a.ExpiresAt))
	return c.mail(oneLine(a.Headline(), 200), t.String(), d.AccountURL, views.ApprovalEmail(d))
}
