package handlers

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/views"
)

// TestSessionExport: an owner downloads a session's mail as JSON and as
// Markdown, every note oldest first, analysis included, bodies as written
// and, in JSON, rendered as the pages render them; anyone else gets 404.
func TestSessionExport(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	asked := f.app.agentNote(f.ag, f.session.ID, "Which API?", "**v1** or v2?\n"+xss)
	f.alice.get(f.url)
	f.alice.doc(f.alice.postHTMX(f.url+"/mail", url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(asked)}, "body": {"v2."}}), http.StatusOK)
	f.alice.doc(f.alice.postHTMX(f.url+"/mail", url.Values{"type": {"analysis"}, "subject": {"Why"}, "body": {"private"}}), http.StatusOK)

	res := f.alice.get(f.url + "/export.json")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
		!strings.Contains(res.Header.Get("Content-Disposition"), "attachment; filename=\"team_session-"+f.session.PublicID+".json\"") {
		t.Fatalf("json: %d %v", res.StatusCode, res.Header)
	}
	var out struct {
		Session struct{ Title, Project string }
		Notes   []struct {
			ID          int64  `json:"id"`
			From        string `json:"from"`
			MessageType string `json:"message_type"`
			Body        string `json:"body"`
			BodyHTML    string `json:"body_html"`
			InReplyTo   *int64 `json:"in_reply_to"`
		}
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if out.Session.Title != "Release week" || len(out.Notes) != 3 || out.Notes[0].ID != asked || out.Notes[2].MessageType != "analysis" {
		t.Fatalf("export %s", body)
	}
	if n := out.Notes[0]; n.Body != "**v1** or v2?\n"+xss || !strings.Contains(n.BodyHTML, "<strong>v1</strong>") || strings.Contains(n.BodyHTML, "<script") {
		t.Fatalf("first note %+v", n)
	}
	if r := out.Notes[1]; r.InReplyTo == nil || *r.InReplyTo != asked {
		t.Fatalf("the reply %+v", r)
	}

	res = f.alice.get(f.url + "/export.md")
	md, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/markdown") {
		t.Fatalf("markdown: %d %v", res.StatusCode, res.Header)
	}
	for _, want := range []string{"# Release week", "Subject: Which API?", "**v1** or v2?", "in reply to #" + fmt.Sprint(asked), "Subject: Why", "owners only"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("no %q in:\n%s", want, md)
		}
	}
	if strings.Index(string(md), "Subject: Which API?") > strings.Index(string(md), "Subject: Why") {
		t.Error("not oldest first")
	}

	bob := f.app.owner("bob@example.com", "Bob's")
	for _, ext := range []string{".md", ".json"} {
		if res := bob.get(f.url + "/export" + ext); res.StatusCode != http.StatusNotFound {
			t.Errorf("bob's export%s: %d", ext, res.StatusCode)
		}
	}
}

// TestExportedBodiesCannotForgeEntries: a body that imitates the export's
// own layout (a rule, a heading, an owner's metadata line, a fence of its
// own), raw HTML and an image stay inside its note's fence: rendered, the
// export holds exactly one heading per note, and none of the body's.
func TestExportedBodiesCannotForgeEntries(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	forged := "Done.\n\n```\n\n---\n\n## #99 · reply\n\n**Alice A** (`owner-1`, owner) → whole session · 2026-12-01 10:00:00 UTC\n\n" +
		"Approved, ship it.\n\n`````\n<img src=\"https://evil.example/p.png\"> ![x](https://evil.example/i.png) <script>alert(1)</script>"
	f.app.agentNote(f.ag, f.session.ID, "**Alice A** `owner-1`", forged)
	res := f.alice.get(f.url + "/export.md")
	md, _ := io.ReadAll(res.Body)
	html := views.RenderMarkdown(string(md))
	if n := strings.Count(html, "<h2"); n != 1 {
		t.Fatalf("%d headings in the rendered export, want 1 (one note):\n%s\n%s", n, md, html)
	}
	for _, bad := range []string{"<strong>Alice A</strong>", "<img", "<script"} {
		if strings.Contains(html, bad) {
			t.Errorf("the body's %q escaped its fence:\n%s", bad, html)
		}
	}
	if n := strings.Count(html, "<hr"); n != 1 {
		t.Errorf("%d rules in the rendered export, want the one before its note", n)
	}
	if !strings.Contains(string(md), "\n``````text\n") {
		t.Errorf("no fence longer than the body's backtick runs:\n%s", md)
	}
}
