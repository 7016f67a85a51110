package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// TestHintLines keeps the hint of each shape in testdata/unread_hints.txt
// (label, tab, line, tab, the "unread" member of the structured content),
// with session ids as the store makes them. e2e/mcp-tool-tokens.spec.ts
// counts their cl100k tokens and holds the typical ones to their ceilings.
// Regenerate with UPDATE_GOLDEN=1.
func TestHintLines(t *testing.T) {
	t.Parallel()
	ids := []string{"s_D1X7KfEvcbR-mE-6", "s_03wFIX-SDTm4X-aP", "s_M9b7nBRXj782wWkC", "s_4WjJK5TNjvviiJNX", "s_5fyV1BL83j7MWNEg"}
	sessions := func(counts ...int) []store.UnreadSession {
		var out []store.UnreadSession
		for i, n := range counts {
			out = append(out, store.UnreadSession{SessionType: store.SessionTypes[i%len(store.SessionTypes)], SessionID: ids[i], Count: n})
		}
		return out
	}
	cases := []struct {
		label string
		u     store.Unread
	}{
		{"typical: one note", store.Unread{Total: 1, SessionCount: 1, Sessions: sessions(1)}},
		{"typical: two notes in one session", store.Unread{Total: 2, SessionCount: 1, Sessions: sessions(2)}},
		{"two sessions", store.Unread{Total: 5, SessionCount: 2, Sessions: sessions(3, 2)}},
		{"five sessions", store.Unread{Total: 9, SessionCount: 5, Sessions: sessions(4, 2, 1, 1, 1)}},
		{"far behind", func() store.Unread {
			u := store.Unread{Total: 2*store.MaxUnreadCounted + 3, More: true, SessionCount: 3, Sessions: sessions(store.MaxUnreadCounted, store.MaxUnreadCounted, 3)}
			u.Sessions[0].More, u.Sessions[1].More = true, true
			return u
		}()},
	}
	var b strings.Builder
	for _, c := range cases {
		member, err := json.Marshal(toUnreadOut(c.u))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(c.label + "\t" + hintLine(c.u) + "\t" + `"unread":` + string(member) + "\n")
	}
	path := filepath.Join("testdata", "unread_hints.txt")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if string(want) != b.String() {
		t.Fatalf("hint lines differ from %s; if intended, run UPDATE_GOLDEN=1 go test ./handlers/mcp/\n%s", path, b.String())
	}
	if !strings.HasPrefix(hintLine(cases[0].u), "1 unread note for you: agent_session s_D1X7KfEvcbR-mE-6 (1). Read it with") {
		t.Fatalf("one note: %q", hintLine(cases[0].u))
	}
	if !strings.Contains(hintLine(cases[3].u), "(1) and 2 more sessions. Read them with read_session_mail.") {
		t.Fatalf("five sessions: %q", hintLine(cases[3].u))
	}
	if !strings.HasPrefix(hintLine(cases[4].u), "203+ unread notes for you: agent_session s_D1X7KfEvcbR-mE-6 (100+), ") {
		t.Fatalf("far behind: %q", hintLine(cases[4].u))
	}
}
