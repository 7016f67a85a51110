package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// claudeRelay is what e2e/claude-relay.mjs reports of one turn.
type claudeRelay struct {
	Requests            int  `json:"requests"`
	Note1AfterTool1     bool `json:"note1_after_tool1"`
	Note1AfterTool2     bool `json:"note1_after_tool2"`
	Note2InStopFeedback int  `json:"note2_in_stop_feedback"`
	StopContinued       bool `json:"stop_continued"`
	Exit                int  `json:"exit"`
	RunMS               int  `json:"run_ms"`
	Stdout, Stderr      string
	Steps               []struct{ Step, Status, MS int }
}

// TestClaudeCodeHearsAnOwnerMidTurn drives the real Claude Code (`claude
// -p`, its model a scripted Messages API) in a checkout set up by `agent
// install claude-code`, whose bridge holds the relay. An owner's note posted
// after the first tool call is in the model's request after the next tool
// call (PostToolUse, from the spool), and the owner's page shows it in the
// agent's context; a note that comes as the turn is about to end keeps the
// turn going once (Stop). Claude Code is not a dependency of osFoundry: the
// test runs when OSFOUNDRY_CLAUDE names its binary.
func TestClaudeCodeHearsAnOwnerMidTurn(t *testing.T) {
	claude := claudeBinary()
	if claude == "" {
		t.Skip("no Claude Code binary: make node-deps installs it, or set OSFOUNDRY_CLAUDE")
	}
	t.Parallel()
	root, _ := filepath.Abs("../..")
	s := startAgentServer(t)
	m := newAgentMachine(t)
	conn := s.connectAgent(t, m, "claude-relay")
	if out, errOut, code := m.run("", "agent", "install", "claude-code", "--server", s.URL, "--absolute"); code != 0 {
		t.Fatalf("install: %s %s", out, errOut)
	}
	owner := s.owner(t)
	owner.signIn()
	notes := []string{"Rebase onto main first", "Also bump the changelog"}
	posted := make([]int64, 0, 2)
	// The script asks for each note at its step and goes on once the
	// bridge has spooled it.
	steps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.URL.Query().Get("step"), &n)
		if n < 1 || n > len(notes) {
			http.Error(w, "no such step", http.StatusBadRequest)
			return
		}
		if err := owner.note(s.w.session.ID, fmt.Sprintf("Owner step %d", n), notes[n-1]); err != nil {
			t.Error(err)
		}
		posted = append(posted, int64(countRows(t, s.dsn, `SELECT max(id)::int FROM notes WHERE session_id = $1`, s.w.session.ID)))
		if !waitFor(10*time.Second, func() bool { return len(m.spool().Notes) >= n }) {
			t.Errorf("step %d: the note never reached the bridge's spool", n)
		}
	}))
	t.Cleanup(steps.Close)

	cmd := exec.Command("node", filepath.Join(root, "e2e", "claude-relay.mjs"))
	cmd.Dir = root
	cmd.Env = append(m.env(), "CLAUDE="+claude, "CHECKOUT="+m.checkout, "STEP_URL="+steps.URL, "NOTE1="+notes[0], "NOTE2="+notes[1])
	raw, err := cmd.Output()
	var got claudeRelay
	if err != nil || json.Unmarshal(raw, &got) != nil {
		t.Fatalf("claude-relay.mjs: %v %s", err, raw)
	}
	t.Logf("Claude Code: %d model requests, exit %d, %d ms; steps %+v", got.Requests, got.Exit, got.RunMS, got.Steps)
	switch {
	case got.Note1AfterTool1:
		t.Errorf("the note was in the model's request before it was posted")
	case !got.Note1AfterTool2:
		t.Errorf("the owner's note posted after the first tool call is not in the request after the second: %s %s\nhook log:\n%s", got.Stdout, got.Stderr, m.hookLog())
	case !got.StopContinued || got.Note2InStopFeedback != 1:
		t.Errorf("a note unseen at the end of the turn did not keep it going exactly once (continued %v, in feedback %d): %s\nhook log:\n%s",
			got.StopContinued, got.Note2InStopFeedback, got.Stdout, m.hookLog())
	}
	if len(posted) != 2 {
		t.Fatalf("the script asked for %d notes, want 2", len(posted))
	}
	awaitCond(t, 10*time.Second, "both notes are recorded delivered", func() bool {
		return countRows(t, s.dsn, `SELECT count(*)::int FROM note_deliveries WHERE connection_id = $1`, conn) == 2
	})
	_, doc, err := owner.page(fmt.Sprintf("/sessions/%d", s.w.session.ID))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range posted {
		line := doc.Find(fmt.Sprintf("#receipts-%d", id)).Text()
		if !strings.Contains(strings.Join(strings.Fields(line), " "), "in @claude-relay's context") {
			t.Errorf("note %d: the owner's page says %q, want it in @claude-relay's context", id, line)
		}
	}
}
