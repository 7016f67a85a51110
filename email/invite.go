package email

import (
	"context"
	"fmt"
	"html"
	"net/mail"

	gomail "github.com/wneessen/go-mail"

	"github.com/osfoundry/osfoundry/store"
)

// Invite composes the email of an invitation to join a workspace.
func (c Composer) Invite(inv *store.PersonInvite, link string) store.Email {
	who := inv.InvitedByName
	if who == "" {
		who = "An admin"
	}
	expires := inv.ExpiresAt.UTC().Format("2 January 2006, 15:04 UTC")
	text := fmt.Sprintf("%s invited you to the workspace %q on osFoundry, as %s.\n\nChoose your name and password here (the link works once, until %s):\n%s\n",
		who, inv.WorkspaceName, inv.Role, expires, link)
	body := fmt.Sprintf(`<p>%s invited you to the workspace <strong>%s</strong> on osFoundry, as %s.</p><p><a href="%s">Choose your name and password</a> (the link works once, until %s).</p>`,
		html.EscapeString(who), html.EscapeString(inv.WorkspaceName), html.EscapeString(string(inv.Role)), html.EscapeString(link), html.EscapeString(expires))
	return store.Email{Subject: "Join " + oneLine(inv.WorkspaceName, 100) + " on osFoundry", Text: text, HTML: body}
}

// InviteSender emails invitations at once, not through the outbox: the inviter
// sees the link too, so a failure is logged, not retried.
func InviteSender(smtp SMTP, c Composer) func(ctx context.Context, inv *store.PersonInvite, link string) error {
	return func(ctx context.Context, inv *store.PersonInvite, link string) error {
		m := c.Invite(inv, link)
		msg := gomail.NewMsg()
		if err := msg.From(smtp.From); err != nil {
			return err
		}
		to, err := mail.ParseAddress(inv.Email)
		if err != nil {
			return err
		}
		msg.ToMailAddress(to)
		msg.Subject(m.Subject)
		msg.SetDate()
		msg.SetGenHeader(gomail.Header("X-Osfoundry-Kind"), "invitation")
		msg.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
		msg.SetBodyString(gomail.TypeTextPlain, m.Text)
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
		client, err := smtp.client()
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, 2*sendTimeout)
		defer cancel()
		return client.DialAndSendWithContext(ctx, msg)
	}
}
