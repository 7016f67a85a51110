package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// hookClient is the agent CLI that runs `osfoundry agent hook` (its
// --client): where the shapes of the hook's input and answer differ
// between clients, the difference lives here.
//
// Claude Code and Codex send the same common fields (session_id, cwd,
// hook_event_name; Stop's stop_hook_active) and validate the same answers:
// {"hookSpecificOutput":{"hookEventName","additionalContext"}} for the
// events that take context, {"decision":"block","reason"} for Stop. Codex
// checks an answer against a schema that allows no other field, and has
// no SessionEnd (and no agent_id: its subagents have events of their own).
type hookClient string

const (
	clientClaudeCode hookClient = "claude-code"
	clientCodex      hookClient = "codex"
)

// hookClients are the clients install and hook know, by the name the
// commands take.
var hookClients = []hookClient{clientClaudeCode, clientCodex}

// parseHookClient reads --client; empty is Claude Code, the client the
// hooks were first written for (installed entries without --client).
func parseHookClient(s string) (hookClient, error) {
	if s == "" {
		return clientClaudeCode, nil
	}
	for _, c := range hookClients {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("--client %q: one of %s", s, clientNames())
}

func clientNames() string {
	var names []string
	for _, c := range hookClients {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

// title is how messages name the client.
func (c hookClient) title() string {
	if c == clientCodex {
		return "Codex"
	}
	return "Claude Code"
}

// contextAnswer is the answer of an event that adds context.
type contextAnswer struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// blockAnswer is Stop's answer that keeps the turn going, with reason as
// what the model reads next.
type blockAnswer struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// answer is the JSON the client reads for an event whose work produced
// text: for Stop, a block with the text as its reason; for the others, the
// text as additional context.
func (c hookClient) answer(event, text string) ([]byte, error) {
	var v any
	if event == "Stop" {
		v = blockAnswer{Decision: "block", Reason: text}
	} else {
		var o contextAnswer
		o.HookSpecificOutput.HookEventName = event
		o.HookSpecificOutput.AdditionalContext = text
		v = o
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readHookInput reads one event as the client sends it.
func (c hookClient) readHookInput(r io.Reader) (hookInput, error) {
	var in hookInput
	if err := json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(&in); err != nil {
		return in, err
	}
	in.Client = c
	return in, nil
}
