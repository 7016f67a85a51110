package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The names install writes into Claude Code's settings of a checkout.
const (
	mcpServerName    = "osfoundry"
	mcpConfigFile    = ".mcp.json"
	settingsFile     = ".claude/settings.local.json"
	hookTimeoutSecs  = 5 // above the hook's own 2 s limit; raises SessionEnd's 1.5 s default budget
	excludedSettings = "/" + settingsFile
)

var hookEvents = []string{"SessionStart", "UserPromptSubmit", "PermissionRequest", "PostToolUse", "Stop", "SessionEnd"}

type installOptions struct {
	Client   hookClient
	Checkout string
	Server   string
	// Command is "osfoundry", found on PATH, so that committed files work on
	// every machine; with --absolute the running binary's path.
	Command      string
	DryRun       bool
	Remove       bool
	NoAllowRule  bool
	ApprovalWait int // seconds; 0 is the default
}

type mcpEntry struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

type hookHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

type hookGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookHandler `json:"hooks"`
}

type fileEdit struct {
	rel    string // for the summary, relative to the checkout
	path   string
	after  []byte // nil: delete the file
	mode   fs.FileMode
	create bool
	lines  []string // the changes, diff-like
	notes  []string // what the user should know, changed or not
}

// install merges the MCP server entry and the hooks into the client's files
// of the checkout, leaving every other setting as it was; running it again
// changes nothing, and Remove takes out exactly what it put in.
func install(ctx context.Context, out io.Writer, o installOptions) error {
	var edits, notes []*fileEdit
	editors := []func(installOptions) (*fileEdit, error){editMCPConfig, editSettings}
	if o.Client == clientCodex {
		editors = []func(installOptions) (*fileEdit, error){editCodexConfig, editCodexHooks}
	}
	for _, f := range editors {
		e, err := f(o)
		if err != nil {
			return err
		}
		if len(e.lines) > 0 {
			edits = append(edits, e)
		}
		notes = append(notes, e)
	}
	if !o.Remove && o.Client != clientCodex {
		if e := editExclude(ctx, o.Checkout); e != nil && len(edits) > 0 {
			edits = append(edits, e)
		}
	}
	defer func() {
		for _, e := range notes {
			for _, n := range e.notes {
				fmt.Fprintln(out, n)
			}
		}
	}()
	verb := "installed"
	if o.Remove {
		verb = "removed"
	}
	if len(edits) == 0 {
		fmt.Fprintf(out, "%s integration already %s in %s: nothing changed.\n", o.Client.title(), verb, o.Checkout)
		return nil
	}
	fmt.Fprintf(out, "%s integration for %s (server %s):\n", o.Client.title(), o.Checkout, o.Server)
	for _, e := range edits {
		switch {
		case e.after == nil:
			fmt.Fprintf(out, "  %s (deleted: nothing else was in it)\n", e.rel)
		case e.create:
			fmt.Fprintf(out, "  %s (new file)\n", e.rel)
		default:
			fmt.Fprintf(out, "  %s\n", e.rel)
		}
		for _, l := range e.lines {
			fmt.Fprintf(out, "    %s\n", l)
		}
	}
	if o.DryRun {
		fmt.Fprintln(out, "Dry run: nothing was written.")
		return nil
	}
	for _, e := range edits {
		if err := e.apply(); err != nil {
			return err
		}
	}
	switch {
	case o.Remove:
		fmt.Fprintf(out, "Done. Restart %s in this checkout to drop the server and hooks.\n", o.Client.title())
	case o.Client == clientCodex:
		fmt.Fprintln(out, "Done. Codex reads .codex/ only in a trusted project: start codex in this checkout, trust the folder if it asks, "+
			"and trust the osfoundry hooks in /hooks (Codex runs a new or changed hook only once trusted).")
	default:
		fmt.Fprintln(out, "Done. Start (or restart) Claude Code in this checkout; approve the osfoundry server if it asks.")
	}
	return nil
}

func (e *fileEdit) apply() error {
	if e.after == nil {
		if err := os.Remove(e.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(e.path), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(e.path, e.after, e.mode)
}

func readSettings(path string) (*object, fs.FileMode, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newObject(), 0o644, true, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	o, err := parseObject(b)
	if err != nil {
		return nil, 0, false, fmt.Errorf("%s is not valid JSON (%v): fix it first; nothing was changed", path, err)
	}
	return o, mode, false, nil
}

func indentJSON(o *object) []byte {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

func (o installOptions) bridgeEntry() mcpEntry {
	return mcpEntry{Type: "stdio", Command: o.Command, Args: []string{"agent", "mcp", "--server", o.Server}}
}

func (o installOptions) hook() hookHandler {
	words := []string{o.Command, "agent", "hook", "--server", o.Server}
	if o.Client != clientClaudeCode && o.Client != "" {
		words = append(words, "--client", string(o.Client))
	}
	return hookHandler{Type: "command", Command: shellJoin(words...), Timeout: hookTimeoutSecs}
}

// hookFor gives PermissionRequest a timeout past the approval wait: a hook
// the client kills gives no verdict.
func (o installOptions) hookFor(ev string) hookHandler {
	h := o.hook()
	if ev == "PermissionRequest" {
		wait := o.ApprovalWait
		if wait <= 0 {
			wait = defaultApprovalWait
		}
		h.Timeout = wait + 10
	}
	return h
}

const defaultApprovalWait = 120

// editExclude keeps the personal settings file out of git (.git/info/exclude).
func editExclude(ctx context.Context, checkout string) *fileEdit {
	if top, _ := gitTopAndBranch(ctx, checkout, false); top == "" {
		return nil
	}
	cmd := exec.CommandContext(ctx, "git", "-C", checkout, "check-ignore", "-q", settingsFile)
	if err := cmd.Run(); err == nil || cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		return nil // ignored already, or git cannot tell
	}
	p, err := git(ctx, checkout, "rev-parse", "--git-path", "info/exclude")
	if err != nil || p == "" {
		return nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(checkout, p)
	}
	before, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	after := bytes.Clone(before)
	if len(after) > 0 && after[len(after)-1] != '\n' {
		after = append(after, '\n')
	}
	after = append(after, excludedSettings+"\n"...)
	rel, err := filepath.Rel(checkout, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = p
	}
	return &fileEdit{rel: rel, path: p, after: after, mode: 0o644, create: before == nil,
		lines: []string{"+ " + excludedSettings + " (personal settings stay out of git)"}}
}

// installCommand is "osfoundry" or the running binary's path; note says when
// "osfoundry" on PATH is not this binary.
func installCommand(absolute bool) (command, note string) {
	exe, err := os.Executable()
	if err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
	}
	if absolute && err == nil {
		return exe, ""
	}
	p, lookErr := exec.LookPath("osfoundry")
	switch {
	case lookErr != nil:
		note = "Note: osfoundry is not on PATH here; `make install` puts it there (or install again with --absolute to write this binary's path)."
	case err == nil:
		a, err1 := os.Stat(p)
		b, err2 := os.Stat(exe)
		if err1 == nil && err2 == nil && !os.SameFile(a, b) {
			note = fmt.Sprintf("Note: osfoundry on PATH is %s, not this binary (%s); the entries start the one on PATH.", p, exe)
		}
	}
	return "osfoundry", note
}

func shellJoin(words ...string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
