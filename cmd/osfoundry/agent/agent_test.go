package agent

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestNormalizeServer(t *testing.T) {
	for in, want := range map[string]string{
		"https://Foundry.example.com":      "https://foundry.example.com",
		"https://foundry.example.com/":     "https://foundry.example.com",
		"https://foundry.example.com/mcp":  "https://foundry.example.com",
		"http://localhost:8080/base/mcp/":  "http://localhost:8080/base",
		" http://127.0.0.1:9 ":             "http://127.0.0.1:9",
		"":                                 "",
		"foundry.example.com":              "",
		"ftp://foundry.example.com":        "",
		"https://u:p@foundry.example.com":  "",
		"https://foundry.example.com/?x=1": "",
	} {
		got, err := normalizeServer(in)
		if want == "" && err == nil || want != "" && (err != nil || got != want) {
			t.Errorf("NormalizeServer(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestReadEvents(t *testing.T) {
	msgs, err := readEvents(strings.NewReader("event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1}\n\n: comment\n\ndata: {\"a\":2}\n"), nil)
	if err != nil || len(msgs) != 2 || string(msgs[1]) != `{"a":2}` {
		t.Fatalf("%q %v", msgs, err)
	}
}

func strp(s string) *string { return &s }

func TestFormatMailStaysUnderTheContextCap(t *testing.T) {
	at := time.Date(2026, 11, 30, 14, 2, 0, 0, time.UTC)
	var notes []mailNote
	for i := range 20 {
		notes = append(notes, mailNote{ID: int64(100 - i), From: "alice", FromName: "Alice", FromKind: "owner", To: strp("ext-me"),
			MessageType: "reply", Subject: fmt.Sprintf("Subject %d", i), Body: strings.Repeat("é", 900+i), CreatedAt: at})
	}
	text := formatMail(25, []sessionMail{{unreadSession: unreadSession{SessionType: "team_session", SessionID: "s_abc", Count: 20}, Notes: notes}})
	if n := len(text); n > 10000 {
		t.Errorf("context is %d bytes, over Claude Code's 10,000", n)
	}
	fence := regexp.MustCompile(`\[osfoundry-note [a-z2-7]{20}\]`).FindString(text)
	if fence == "" {
		t.Fatalf("no fence:\n%s", text)
	}
	for _, want := range []string{fence + " begin: note 100 · reply · team_session s_abc · 2026-11-30 14:02 UTC · from \"Alice\" (alice, owner) to this agent (ext-me)\nSubject: Subject 0\n",
		"\n" + fence + " end\n", "more: list_sessions and read_session_mail show them", "reply_to_sender"} {
		if !strings.Contains(text, want) {
			t.Errorf("context lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(text, "(body not shown here: read_session_mail with session_type \"team_session\", session_id \"s_abc\", before_id") {
		t.Error("a body that does not fit is not pointed to")
	}
	if formatMail(3, nil) != "" {
		t.Error("no notes should make no context")
	}
}
