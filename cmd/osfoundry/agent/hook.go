package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Hook timing: Claude Code waits for a hook before it goes on.
const (
	hookLimit = 2 * time.Second         // hard limit for the whole run (watchdog)
	hookWork  = 1700 * time.Millisecond // deadline of the network work
	mailEvery = 30 * time.Second        // UserPromptSubmit and PostToolUse check mail at most this often
)

// hookInput is the common part of a hook event.
type hookInput struct {
	SessionID      string     `json:"session_id"`
	Cwd            string     `json:"cwd"`
	HookEventName  string     `json:"hook_event_name"`
	AgentID        string     `json:"agent_id"`         // set inside a subagent
	StopHookActive bool       `json:"stop_hook_active"` // a Stop after a Stop hook's block
	Client         hookClient `json:"-"`                // --client
}

// runHook runs `osfoundry agent hook` on one event. It never breaks the
// client: exit status 0, nothing or one valid answer, within hookLimit; a
// problem becomes a line in the hook log.
func runHook(args []string, stdin io.Reader, stdout io.Writer) {
	start := time.Now()
	dirs, _ := defaultDirs()
	var event atomic.Value // the event's name, once read
	event.Store("(event not read)")
	logf := func(format string, a ...any) {
		appendLog(dirs, fmt.Sprintf("%s %s %s: %s", start.Format(time.RFC3339), event.Load(), time.Since(start).Round(time.Millisecond), fmt.Sprintf(format, a...)))
	}
	// The watchdog ends the process at the limit, unless the answer is
	// being written (out is held), which then completes first.
	var out sync.Mutex
	watchdog := time.AfterFunc(hookLimit, func() {
		out.Lock()
		logf("gave up at the %s limit", hookLimit)
		os.Exit(0)
	})
	defer watchdog.Stop()
	defer func() {
		if r := recover(); r != nil {
			logf("panic: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), hookWork)
	defer cancel()
	fs := flag.NewFlagSet("osfoundry agent hook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	server := fs.String("server", "", "osFoundry server")
	clientName := fs.String("client", "", "the agent CLI that runs the hook: "+clientNames())
	if err := fs.Parse(args); err != nil {
		logf("%v", err)
		return
	}
	client, err := parseHookClient(*clientName)
	if err != nil {
		logf("%v", err)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
	var in hookInput
	if err == nil {
		in, err = client.readHookInput(bytes.NewReader(raw))
	}
	if err != nil {
		logf("read the hook event: %v", err)
		return
	}
	event.Store(in.HookEventName)
	if in.HookEventName == "PermissionRequest" {
		// Its own limits: a short setup, then the project's wait.
		cancel()
		verdict := runPermission(dirs, *server, raw, func(d time.Duration) { watchdog.Reset(d) }, logf)
		if verdict != nil {
			writeAnswer(&out, stdout, verdict, logf)
		}
		return
	}
	text, err := runEvent(ctx, dirs, *server, in, time.Now)
	if err != nil {
		logf("%v", err)
	}
	if text == "" {
		return
	}
	answer, err := client.answer(in.HookEventName, text)
	if err != nil {
		logf("encode answer: %v", err)
		return
	}
	out.Lock()
	if _, err := stdout.Write(answer); err != nil {
		logf("write answer: %v", err)
	}
}

// writeAnswer holds out so that the watchdog lets the answer complete.
func writeAnswer(out *sync.Mutex, stdout io.Writer, o any, logf func(string, ...any)) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		logf("encode answer: %v", err)
		return
	}
	out.Lock()
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		logf("write answer: %v", err)
	}
}

// runEvent returns the context to add; mail read before a later failure is
// still returned with the error.
func runEvent(ctx context.Context, dirs folders, server string, in hookInput, now func() time.Time) (string, error) {
	if dirs.Config == "" {
		return "", errors.New("no user config folder")
	}
	switch in.HookEventName {
	case "SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd", "Stop":
	default:
		return "", nil // not an event this hook acts on
	}
	if in.AgentID != "" {
		// Inside a subagent: mail read there would never reach the main
		// conversation, and status belongs to the session.
		return "", nil
	}
	server, err := normalizeServer(server)
	if err != nil {
		return "", err
	}
	// A running bridge's spool, read without the network.
	quick := quickCheckout(startDir(in.Cwd))
	if text, ok, err := spoolEvent(account{dirs: dirs, server: server, checkout: quick}, in, now()); ok {
		return text, errors.Join(err, endAnsweredPrompts(ctx, account{dirs: dirs, server: server, checkout: quick}))
	}
	checkout, err := checkoutOf(ctx, startDir(in.Cwd))
	if err != nil {
		return "", err
	}
	acct := account{dirs: dirs, server: server, checkout: checkout}
	if checkout != quick {
		if text, ok, err := spoolEvent(acct, in, now()); ok {
			return text, errors.Join(err, endAnsweredPrompts(ctx, acct))
		}
	}
	c, err := newClient(acct)
	if err != nil {
		return "", err
	}
	// A prompt whose hook the client ended was answered at the terminal.
	answered := c.endAnsweredPrompts(ctx)
	switch in.HookEventName {
	case "SessionStart":
		text, err := sessionStart(ctx, c, now())
		return text, errors.Join(answered, err)
	case "SessionEnd":
		return "", errors.Join(answered, sessionEnd(ctx, c))
	case "Stop":
		text, err := stopCheck(ctx, c, in)
		return text, errors.Join(answered, err)
	}
	due, err := acct.mailDue(now())
	if err != nil || !due {
		return "", errors.Join(answered, err)
	}
	res, err := c.callTool(ctx, "list_sessions", nil)
	if err != nil {
		return "", err
	}
	text, err := mailContext(ctx, c, res.unread())
	return text, err
}

const msgUnclaimed = "osFoundry: this checkout's connection has no agent profile yet, so owners cannot see its status. " +
	"claim_connected_profile (a handle and a display name) creates one."

// sessionStart reports the repository and branch, and returns the agents on
// the same branch and the unread mail.
func sessionStart(ctx context.Context, c *client, now time.Time) (string, error) {
	top, branch := gitTopAndBranch(ctx, c.acct.checkout, true)
	status := map[string]any{"repo": clip(repoName(ctx, c.acct.checkout), 300), "branch": nil}
	if top != "" && branch != "" {
		status["branch"] = clip(branch, 200)
	}
	res, err := c.callTool(ctx, "set_status", status)
	if err != nil {
		return "", err
	}
	var parts []string
	var problem error
	if o := res.overlapHint(); o != "" {
		parts = append(parts, msgOverlaps+"\n"+o)
	}
	hint := res.unread()
	if res.IsError {
		if strings.Contains(res.text(), "claim_connected_profile") {
			parts = append(parts, msgUnclaimed)
		} else {
			problem = fmt.Errorf("set_status: %s", res.text())
		}
		if hint == nil {
			if res, err = c.callTool(ctx, "list_sessions", nil); err != nil {
				return strings.Join(parts, "\n\n"), err
			}
			hint = res.unread()
		}
	}
	if err := c.acct.markMailChecked(now); err != nil && problem == nil {
		problem = err
	}
	text, err := mailContext(ctx, c, hint)
	if text != "" {
		parts = append(parts, text)
	}
	return strings.Join(parts, "\n\n"), errors.Join(problem, err)
}

func sessionEnd(ctx context.Context, c *client) error {
	res, err := c.callTool(ctx, "set_status", map[string]any{"task": nil})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("set_status: %s", res.text())
	}
	return nil
}

func mailContext(ctx context.Context, c *client, hint *unreadHint) (string, error) {
	if hint == nil {
		return "", nil
	}
	mail, err := c.readUnread(ctx, hint)
	return formatMail(hint.Total, mail), err
}

// mailDue records and allows a mail check at most every mailEvery; a run
// holding the mark's lock means a check is under way.
func (a account) mailDue(now time.Time) (bool, error) {
	unlock, ok, err := tryLockFile(a.throttlePath() + ".lock")
	if err != nil || !ok {
		return false, err
	}
	defer unlock()
	b, _ := os.ReadFile(a.throttlePath())
	if last, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b))); err == nil {
		if since := now.Sub(last); since >= 0 && since < mailEvery {
			return false, nil
		}
	}
	return true, writeFileAtomic(a.throttlePath(), []byte(now.Format(time.RFC3339Nano)+"\n"), 0o600)
}

func (a account) markMailChecked(now time.Time) error {
	if err := ensureDir(filepath.Dir(a.throttlePath())); err != nil {
		return err
	}
	return writeFileAtomic(a.throttlePath(), []byte(now.Format(time.RFC3339Nano)+"\n"), 0o600)
}

// maxLogBytes is where the hook log starts over, the previous one kept as .1.
const maxLogBytes = 1 << 20

// appendLog strips control characters (a line may quote a server) and fails
// silently, having nowhere else to report.
func appendLog(dirs folders, line string) {
	if dirs.State == "" || ensureDir(dirs.State) != nil {
		return
	}
	path := hookLogPath(dirs)
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogBytes {
		os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(printable(strings.ReplaceAll(line, "\n", " ")) + "\n")
}

func hookLogPath(dirs folders) string { return filepath.Join(dirs.State, "hook.log") }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
