package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// spoolAccount is an account in a temporary state folder whose bridge is
// running (this test holds its lock) with its stream open.
func spoolAccount(t testing.TB) account {
	t.Helper()
	dir := t.TempDir()
	a := account{dirs: folders{Config: filepath.Join(dir, "config"), State: filepath.Join(dir, "state")}, server: "https://foundry.example.com", checkout: dir}
	if err := ensureDir(a.spoolDir()); err != nil {
		t.Fatal(err)
	}
	release, err := holdShared(a.bridgeLockPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	if err := a.withSpool(func(sp *spoolFile) bool { sp.Streams = []int{os.Getpid()}; return true }, nil); err != nil {
		t.Fatal(err)
	}
	return a
}

func spoolNote(id int64, body string) relayedNote {
	return relayedNote{mailNote: mailNote{ID: id, From: "owner-1", FromName: "Olive", FromKind: "owner", MessageType: "note",
		Subject: fmt.Sprintf("Note %d", id), Body: body, CreatedAt: time.Now(), ForYou: true}, SessionType: "team_session", SessionID: "s_1"}
}

// TestSpoolIsBoundedAndPrivate: the spool is 0600; past its most notes the
// oldest go first, each undelivered one with a log line; a note comes once.
func TestSpoolIsBoundedAndPrivate(t *testing.T) {
	t.Parallel()
	a := spoolAccount(t)
	var logged []string
	logf := func(f string, v ...any) { logged = append(logged, fmt.Sprintf(f, v...)) }
	for i := range int64(spoolMaxNotes + 3) {
		a.withSpool(func(sp *spoolFile) bool { return sp.add(spoolNote(i+1, "x"), time.Now()) }, logf)
	}
	a.withSpool(func(sp *spoolFile) bool { return sp.add(spoolNote(spoolMaxNotes+3, "again"), time.Now()) }, logf)
	sp, _ := a.readSpool()
	if len(sp.Notes) != spoolMaxNotes || sp.Notes[0].Note.ID != 4 || sp.LastEventID != spoolMaxNotes+3 {
		t.Fatalf("spool holds %d notes from %d (last %d)", len(sp.Notes), sp.Notes[0].Note.ID, sp.LastEventID)
	}
	if len(logged) != 3 || !strings.Contains(logged[0], "dropped note 1") {
		t.Fatalf("log: %q", logged)
	}
	fi, err := os.Stat(a.spoolPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("spool file: %v %v", fi.Mode(), err)
	}
	big := strings.Repeat("b", spoolMaxBytes/4)
	for i := range int64(6) {
		a.withSpool(func(sp *spoolFile) bool { return sp.add(spoolNote(1000+i, big), time.Now()) }, logf)
	}
	if fi, _ := os.Stat(a.spoolPath()); fi.Size() > spoolMaxBytes {
		t.Fatalf("spool is %d bytes, more than %d", fi.Size(), spoolMaxBytes)
	}
}

// BenchmarkSpoolToContext is the hook's own work for a PostToolUse with
// one note spooled beside a few delivered ones: find the bridge, read the
// spool, fence the note, mark it delivered, save (the process's start is
// not in it).
func BenchmarkSpoolToContext(b *testing.B) {
	a := spoolAccount(b)
	in := hookInput{HookEventName: "PostToolUse"}
	for i := range b.N {
		a.withSpool(func(sp *spoolFile) bool {
			sp.Notes = sp.Notes[max(0, len(sp.Notes)-5):]
			return sp.add(spoolNote(int64(i+1), "Rebase onto main first."), time.Now())
		}, nil)
		text, ok, err := spoolEvent(a, in, time.Now())
		if !ok || err != nil || text == "" {
			b.Fatalf("spoolEvent: %v %v %q", ok, err, text)
		}
	}
}
