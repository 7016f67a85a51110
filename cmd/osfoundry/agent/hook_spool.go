package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The hooks' side of the relay: while a bridge's stream is open, the hooks
// take what it spooled at every event, without the network or the throttle.

const (
	spoolIntro = "osFoundry Team mail: %s addressed to this agent just arrived (now in your context; read_session_mail shows them again and marks them read).\n"
	stopIntro  = "Before you end your turn: osFoundry Team mail brought %s addressed to this agent that you have not seen. " +
		"Weigh it and act on it or answer it (reply_to_sender) first; then you may end your turn.\n"
)

// spoolEvent delivers the spool's undelivered notes; ok is false when no
// bridge's stream is open, and the hook then asks the server. A Stop after a
// Stop block adds nothing, so a turn continues once.
func spoolEvent(acct account, in hookInput, now time.Time) (text string, ok bool, err error) {
	switch in.HookEventName {
	case "UserPromptSubmit", "PostToolUse", "Stop":
	default:
		return "", false, nil
	}
	if !acct.bridgeRunning() {
		return "", false, nil
	}
	logf := func(format string, a ...any) {
		appendLog(acct.dirs, now.Format(time.RFC3339)+" spool: "+fmt.Sprintf(format, a...))
	}
	err = acct.withSpool(func(sp *spoolFile) bool {
		if !sp.connected() {
			return false
		}
		ok = true
		if in.HookEventName == "Stop" && in.StopHookActive {
			return false
		}
		notes := sp.undelivered()
		if len(notes) == 0 {
			return false
		}
		intro, by := spoolIntro, "hook"
		if in.HookEventName == "Stop" {
			intro, by = stopIntro, "stop"
		}
		var ids []int64
		text, ids = formatNotes(intro, len(notes), asMail(notes))
		sp.markDelivered(ids, by, now)
		return len(ids) > 0
	}, logf)
	return text, ok, err
}

// quickCheckout finds the checkout without starting git, which costs the hook
// more than the rest of its work; a wrong guess finds no spool, and then git
// is asked after all.
func quickCheckout(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return abs
		}
	}
}
