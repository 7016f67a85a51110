package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// The unread hint: every result a tool produces for a connection
// with unread mail — mail addressed to it that read_session_mail has not
// returned to it yet (store.Unread) — says so twice: as data, an "unread"
// member of its structured content that carries the sentence too (some
// clients, Codex among them, give the model the structured content only),
// and in words, a last text block that starts on a line of its own (some
// clients join text blocks with no separator). The
// count comes from the statement that verified the token (no round trip of
// its own); read_session_mail's own result carries the count after what it
// returned. Requests refused before a tool runs (401, 403, undecodable
// arguments) carry no hint: they are not tool results.

// unreadOut is the "unread" member of a result's structured content. Its
// field names are part of the published tool contract, and `osfoundry agent
// hook` reads them: renaming one breaks clients.
type unreadOut struct {
	// Total counts the unread notes of every session, each counted up to
	// store.MaxUnreadCounted; More (only when true) says there are more.
	Total int  `json:"total"`
	More  bool `json:"more,omitempty"`
	// Hint is the sentence of the hint's text block (hintLine).
	Hint string `json:"hint"`
	// Sessions are at most store.MaxUnreadListed of them, the one with the
	// newest unread note first.
	Sessions []unreadSessionOut `json:"sessions"`
}

type unreadSessionOut struct {
	SessionType string `json:"session_type"`
	SessionID   string `json:"session_id"`
	Count       int    `json:"count"`
	More        bool   `json:"more,omitempty"`
}

func toUnreadOut(u store.Unread) unreadOut {
	out := unreadOut{Total: u.Total, More: u.More, Hint: hintLine(u), Sessions: make([]unreadSessionOut, len(u.Sessions))}
	for i, s := range u.Sessions {
		out.Sessions[i] = unreadSessionOut{SessionType: s.SessionType, SessionID: s.SessionID, Count: s.Count, More: s.More}
	}
	return out
}

// hintSessions is how many sessions the hint line names before "and N more".
const hintSessions = 3

// hintLine words unread mail in one short line:
// "2 unread notes for you: team_session s_abc (2). Read them with read_session_mail."
// A count that stopped (store.MaxUnreadCounted) reads "100+".
func hintLine(u store.Unread) string {
	var b strings.Builder
	switch {
	case u.More:
		fmt.Fprintf(&b, "%d+ unread notes for you: ", u.Total)
	case u.Total == 1:
		b.WriteString("1 unread note for you: ")
	default:
		fmt.Fprintf(&b, "%d unread notes for you: ", u.Total)
	}
	named := u.Sessions[:min(len(u.Sessions), hintSessions)]
	for i, s := range named {
		if i > 0 {
			b.WriteString(", ")
		}
		plus := ""
		if s.More {
			plus = "+"
		}
		fmt.Fprintf(&b, "%s %s (%d%s)", s.SessionType, s.SessionID, s.Count, plus)
	}
	switch more := u.SessionCount - len(named); {
	case more == 1:
		b.WriteString(" and 1 more session")
	case more > 1:
		fmt.Fprintf(&b, " and %d more sessions", more)
	}
	if u.Total == 1 {
		b.WriteString(". Read it with read_session_mail.")
	} else {
		b.WriteString(". Read them with read_session_mail.")
	}
	return b.String()
}

// withUnread adds the hint to a tool's result when there is unread mail:
// "unread" joins structured (the tool's own JSON object, nil for an isError
// result) and the hint line, after a line break, becomes the last text
// content. Without unread mail the result is the tool's alone.
func withUnread(res *mcpsdk.CallToolResult, structured marshaled, u store.Unread) (*mcpsdk.CallToolResult, error) {
	if structured != nil {
		res.StructuredContent = structured
	}
	if u.Total <= 0 || len(u.Sessions) == 0 {
		return res, nil
	}
	out := toUnreadOut(u)
	hint, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("mcp: marshal unread: %w", err)
	}
	merged := make([]byte, 0, len(structured)+len(hint)+12)
	if len(structured) > 2 && structured[0] == '{' {
		merged = append(append(merged, structured[:len(structured)-1]...), ',')
	} else {
		merged = append(merged, '{')
	}
	merged = append(append(append(merged, `"unread":`...), hint...), '}')
	res.StructuredContent = marshaled(merged)
	res.Content = append(res.Content, &mcpsdk.TextContent{Text: "\n" + out.Hint})
	return res, nil
}
