package handlers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// Exports stream every note of a session, oldest first, read with the
// workspace in the query too.

// exportedNote is read_session_mail's note with its body rendered.
type exportedNote struct {
	ID          int64     `json:"id"`
	From        string    `json:"from"`
	FromName    string    `json:"from_name"`
	FromKind    string    `json:"from_kind"`
	To          *string   `json:"to"`
	MessageType string    `json:"message_type"`
	Subject     string    `json:"subject"`
	Body        string    `json:"body"`
	BodyHTML    string    `json:"body_html"`
	InReplyTo   *int64    `json:"in_reply_to"`
	CreatedAt   time.Time `json:"created_at"`
}

// fromKind is how the exports label a sender.
func fromKind(n *store.Note) string {
	if n.FromAgent() {
		return store.AgentLabel
	}
	return string(store.SenderOwner)
}

// startExport sends the headers of a download named after the session.
func startExport(c echo.Context, s *store.Session, ext, contentType string) *bufio.Writer {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, contentType)
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s.%s"`, s.Type, s.PublicID, ext))
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	return bufio.NewWriterSize(c.Response(), 32<<10)
}

func (s *Server) sessionExportJSON(c echo.Context) error {
	session, p, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	head, err := json.Marshal(map[string]any{"type": session.Type, "id": session.PublicID, "title": session.Title, "project": p.Name})
	if err != nil {
		return err
	}
	w := startExport(c, session, "json", echo.MIMEApplicationJSON)
	fmt.Fprintf(w, `{"session":%s,"exported_at":%q,"notes":[`, head, time.Now().UTC().Format(time.RFC3339))
	first := true
	err = s.store.ExportSessionMailAs(c.Request().Context(), web.Actor(c), session, "json", func(n *store.Note) error {
		b, err := json.Marshal(exportedNote{ID: n.ID, From: n.SenderSlug, FromName: n.SenderName, FromKind: fromKind(n),
			To: n.RecipientSlug, MessageType: n.MessageType, Subject: n.Subject, Body: n.Body, BodyHTML: views.RenderMarkdown(n.Body),
			InReplyTo: n.InReplyTo, CreatedAt: n.CreatedAt})
		if err != nil {
			return err
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		// The status is sent: the download ends short, and the log says why.
		s.log.Warn("export: ended early", "session_id", session.ID, "err", err)
		return nil
	}
	w.WriteString("]}\n")
	return w.Flush()
}

// sessionExportMarkdown writes each note's text in a fence none of it can
// close, so nothing a note says passes for a heading or another note.
func (s *Server) sessionExportMarkdown(c echo.Context) error {
	session, p, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	w := startExport(c, session, "md", "text/markdown; charset=utf-8")
	fmt.Fprintf(w, "# %s\n\n%s · %s `%s` · exported %s\n", markdownText(session.Title), markdownText(p.Name),
		session.Type, session.PublicID, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	err = s.store.ExportSessionMailAs(c.Request().Context(), web.Actor(c), session, "md", func(n *store.Note) error {
		to := "whole session"
		switch {
		case n.RecipientSlug != nil:
			to = "`" + *n.RecipientSlug + "`"
		case n.MessageType == store.MessageAnalysis:
			to = "owners only"
		}
		fmt.Fprintf(w, "\n---\n\n## #%d · %s\n\n**%s** (`%s`, %s) → %s · %s", n.ID, n.MessageType, markdownText(n.SenderName), n.SenderSlug,
			fromKind(n), to, n.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
		if n.InReplyTo != nil {
			fmt.Fprintf(w, " · in reply to #%d", *n.InReplyTo)
		}
		text := strings.TrimRight(n.Body, "\n")
		if n.Subject != "" {
			text = "Subject: " + n.Subject + "\n\n" + text
		}
		fence := markdownFence(text)
		_, err := fmt.Fprintf(w, "\n\n%stext\n%s\n%s\n", fence, text, fence)
		return err
	})
	if err != nil {
		s.log.Warn("export: ended early", "session_id", session.ID, "err", err)
		return nil
	}
	return w.Flush()
}

// markdownFence is longer than any backtick run in text (CommonMark §4.5).
func markdownFence(text string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// markdownText escapes ASCII punctuation (CommonMark §2.4) so a name reads as text.
func markdownText(s string) string {
	var b strings.Builder
	for _, r := range strings.Join(strings.Fields(s), " ") {
		if r < 0x80 && unicode.IsPunct(r) || r < 0x80 && unicode.IsSymbol(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
