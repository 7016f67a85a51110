package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// mailNote is one note as read_session_mail returns it.
type mailNote struct {
	ID          int64     `json:"id"`
	From        string    `json:"from"`
	FromName    string    `json:"from_name"`
	FromKind    string    `json:"from_kind"`
	To          *string   `json:"to"`
	MessageType string    `json:"message_type"`
	Subject     string    `json:"subject"`
	Body        string    `json:"body"`
	CreatedAt   time.Time `json:"created_at"`
	// ForYou is the server's word that the note is addressed to this
	// connection: one of the notes its unread hint counts.
	ForYou bool `json:"for_you"`
}

// sessionMail is the unread mail of one session.
type sessionMail struct {
	unreadSession
	Notes []mailNote
}

// Limits that keep the hook quick and its context under Claude Code's
// 10,000-character cap for hook output.
const (
	maxMailSessions = 5    // sessions read per run
	maxMailPages    = 3    // read_session_mail pages per session
	maxBodyChars    = 2000 // per note
	maxContextChars = 9000 // whole context
)

// readUnread reads the unread notes the hint counts, newest first, with
// read_session_mail (which records them as read and marks them for_you). Sessions are read in
// parallel; a session that fails is left out and the first error returned.
func (c *client) readUnread(ctx context.Context, hint *unreadHint) ([]sessionMail, error) {
	sessions := hint.Sessions
	if len(sessions) > maxMailSessions {
		sessions = sessions[:maxMailSessions]
	}
	out := make([]sessionMail, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = c.readSessionUnread(ctx, s)
		}()
	}
	wg.Wait()
	var kept []sessionMail
	var first error
	for i := range out {
		if errs[i] != nil {
			if first == nil {
				first = errs[i]
			}
			continue
		}
		if len(out[i].Notes) > 0 {
			kept = append(kept, out[i])
		}
	}
	return kept, first
}

func (c *client) readSessionUnread(ctx context.Context, s unreadSession) (sessionMail, error) {
	m := sessionMail{unreadSession: s}
	want := min(s.Count, 20)
	var before int64
	for range maxMailPages {
		args := map[string]any{"session_type": s.SessionType, "session_id": s.SessionID, "limit": min(20, want+5)}
		if before > 0 {
			args["before_id"] = before
		}
		res, err := c.callTool(ctx, "read_session_mail", args)
		if err != nil {
			return m, err
		}
		if res.IsError {
			return m, fmt.Errorf("read_session_mail %s %s: %s", s.SessionType, s.SessionID, res.text())
		}
		var page struct {
			Notes        []mailNote `json:"notes"`
			NextBeforeID *int64     `json:"next_before_id"`
		}
		if err := res.decode(&page); err != nil {
			return m, fmt.Errorf("read_session_mail: %w", err)
		}
		for _, n := range page.Notes {
			if len(m.Notes) < want && n.ForYou {
				m.Notes = append(m.Notes, n)
			}
		}
		if len(m.Notes) >= want || page.NextBeforeID == nil {
			break
		}
		before = *page.NextBeforeID
	}
	return m, nil
}

// formatMail renders unread mail as hook context: factual, compact, each
// note with its id, session, sender and subject, bodies capped so the whole
// stays under Claude Code's limit. total is the hint's count, which may be
// more than was read.
func formatMail(total int, mail []sessionMail) string {
	var notes strings.Builder
	shown, budget := 0, maxContextChars
	for _, s := range mail {
		for _, n := range s.Notes {
			to := "the whole session"
			if n.To != nil {
				to = "this agent (" + *n.To + ")"
			}
			head := fmt.Sprintf("\n[%s %s] note %d · %s · %s\nFrom: %s (%s, %s) to %s\nSubject: %s\n",
				s.SessionType, s.SessionID, n.ID, n.MessageType, n.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
				n.FromName, n.From, n.FromKind, to, truncate(n.Subject, 200))
			if len(head) > budget {
				break
			}
			body := truncate(n.Body, maxBodyChars)
			if len(head)+len(body) > budget {
				body = fmt.Sprintf("(body not shown here: read_session_mail with session_type %q, session_id %q, before_id %d)", s.SessionType, s.SessionID, n.ID+1)
			}
			notes.WriteString(head)
			notes.WriteString(body)
			notes.WriteString("\n")
			budget -= len(head) + len(body)
			shown++
		}
	}
	if shown == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "osFoundry Team mail: %s addressed to this agent (now marked read; read_session_mail shows them again).\n", plural(shown, "unread note"))
	b.WriteString(notes.String())
	if total > shown {
		fmt.Fprintf(&b, "\n%s more: list_sessions and read_session_mail show them.\n", plural(total-shown, "unread note"))
	}
	b.WriteString("\nAnswers go out with reply_to_sender (to = the sender's slug) or post_session_note.")
	return b.String()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
