package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// hookClient is the agent CLI that runs the hook (--client); where the
// clients' shapes differ, the difference lives here. Codex checks an answer
// against a schema that allows no other field, and has no SessionEnd.
type hookClient string

const (
	clientClaudeCode hookClient = "claude-code"
	clientCodex      hookClient = "codex"
)

var hookClients = []hookClient{clientClaudeCode, clientCodex}

// parseHookClient takes empty as Claude Code (entries installed without --client).
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

func (c hookClient) title() string {
	if c == clientCodex {
		return "Codex"
	}
	return "Claude Code"
}

type contextAnswer struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// blockAnswer keeps the turn going; the model reads reason next.
type blockAnswer struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

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

func (c hookClient) readHookInput(r io.Reader) (hookInput, error) {
	var in hookInput
	if err := json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(&in); err != nil {
		return in, err
	}
	in.Client = c
	return in, nil
}
