package agent

import (
	"strings"
	"testing"
)

// TestHookAnswerShapes: the answers Claude Code and Codex validate (Codex
// against schemas that allow no other field).
func TestHookAnswerShapes(t *testing.T) {
	for _, c := range hookClients {
		for event, want := range map[string]string{
			"SessionStart":     `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"a <note> & more"}}`,
			"UserPromptSubmit": `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"a <note> & more"}}`,
			"PostToolUse":      `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"a <note> & more"}}`,
			"Stop":             `{"decision":"block","reason":"a <note> & more"}`,
		} {
			got, err := c.answer(event, "a <note> & more")
			if err != nil || strings.TrimSpace(string(got)) != want {
				t.Errorf("%s %s: %s %v, want %s", c, event, got, err, want)
			}
		}
	}
	if c, err := parseHookClient(""); err != nil || c != clientClaudeCode {
		t.Errorf("no --client: %q %v", c, err)
	}
	if _, err := parseHookClient("cursor"); err == nil || !strings.Contains(err.Error(), "claude-code, codex") {
		t.Errorf("an unknown client: %v", err)
	}
	in, err := clientCodex.readHookInput(strings.NewReader(`{"session_id":"s","turn_id":"t","cwd":"/w","hook_event_name":"Stop","model":"m","permission_mode":"default","stop_hook_active":true,"last_assistant_message":null,"transcript_path":null}`))
	if err != nil || in.HookEventName != "Stop" || !in.StopHookActive || in.Cwd != "/w" || in.Client != clientCodex {
		t.Errorf("Codex's Stop input: %+v %v", in, err)
	}
}
