package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// The unread hint says twice that mail awaits: in the structured content,
// which some clients (Codex) give the model alone, and in a last text block
// on a line of its own, as some clients join text blocks with no separator.

// unreadOut is the "unread" member of a result's structured content. Its
// field names are part of the published tool contract, and `osfoundry agent
// hook` reads them: renaming one breaks clients.
type unreadOut struct {
	Total    int                `json:"total"` // each session counted up to store.MaxUnreadCounted
	More     bool               `json:"more,omitempty"`
	Hint     string             `json:"hint"`
	Sessions []unreadSessionOut `json:"sessions"` // at most store.MaxUnreadListed, newest first
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

const hintSessions = 3

// hintLine words unread mail in one short line:
// "2 unread notes for you: team_session s_abc (2). Read them with read_session_mail."
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

// withUnread adds the hint to a tool's result when there is unread mail;
// structured is the tool's own JSON object, nil for an isError result.
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
