package handlers

import (
	"net/http"
	"strings"
	"testing"
)

// TestAnEmptySessionShowsWhatToHandAnAgent: a session without notes shows
// the server's MCP URL, the full sign-in command (server and handle), the
// Claude Code install line, its session_type and session_id, each with a
// copy button carrying exactly that value.
func TestAnEmptySessionShowsWhatToHandAnAgent(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	base := f.app.srv.URL
	for name, want := range map[string]string{
		"connect-mcp":         base + "/mcp",
		"connect-login":       "osfoundry agent login --server " + base + ` --handle my-agent --name "My agent"`,
		"connect-claude-code": "osfoundry agent install claude-code",
		"session-type":        f.session.Type,
		"session-id":          f.session.PublicID,
	} {
		shown := doc.Find(`[data-testid="mail-empty"] [data-testid="copy-` + name + `"]`).Text()
		copied := doc.Find(`[data-testid="copy-`+name+`-button"]`).AttrOr("data-copy", "")
		if shown != want || copied != want {
			t.Errorf("%s: shows %q, copies %q; want %q", name, shown, copied, want)
		}
	}
	if line := doc.Find(`[data-testid="copy-hand-over"]`).Text(); !strings.Contains(line, f.session.PublicID) || !strings.Contains(line, "post_session_note") {
		t.Errorf("hand-over line %q", line)
	}
}
