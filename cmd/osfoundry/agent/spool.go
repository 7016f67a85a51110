package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The spool is where the relay leaves notes for the hooks to read without the
// network: one JSON file per account, rewritten under its lock and bounded.
// A note is delivered once, by whichever path (a hook, the channel) is first.
// A running bridge holds the bridge lock shared, so a hook that can take it
// exclusively knows no bridge runs.

// Bounds of the spool.
const (
	spoolMaxNotes = 200
	spoolMaxBytes = 2 << 20
	spoolMaxAge   = 7 * 24 * time.Hour
	// spoolKeepDone keeps a delivered note long enough to recognise a copy
	// from another bridge of the account.
	spoolKeepDone = time.Minute
)

type spooledNote struct {
	Note        relayedNote `json:"note"`
	ReceivedAt  time.Time   `json:"received_at"`
	DeliveredAt *time.Time  `json:"delivered_at,omitempty"`
	By          string      `json:"by,omitempty"` // "hook", "stop" or "channel"
	Reported    bool        `json:"reported,omitempty"`
	// Channeled counts as delivered only where the client listens to channels.
	Channeled bool `json:"channeled,omitempty"`
}

// relayedNote is read_session_mail's fields and the note's session.
type relayedNote struct {
	mailNote
	SessionType string `json:"session_type"`
	SessionID   string `json:"session_id"`
}

type spoolFile struct {
	// LastEventID is what a reconnect sends as Last-Event-ID.
	LastEventID int64         `json:"last_event_id"`
	Notes       []spooledNote `json:"notes"`
	Revoked     string        `json:"revoked,omitempty"`
	// Streams are the process ids of bridges whose stream is open; only then
	// do the hooks rely on the spool.
	Streams []int `json:"streams,omitempty"`
}

func (sp *spoolFile) connected() bool { return len(sp.Streams) > 0 }

func (a account) spoolDir() string { return filepath.Join(a.dirs.State, "relay", a.key()) }

func (a account) spoolPath() string { return filepath.Join(a.spoolDir(), "spool.json") }

func (a account) spoolLockPath() string { return filepath.Join(a.spoolDir(), "spool.lock") }

func (a account) bridgeLockPath() string { return filepath.Join(a.spoolDir(), "bridge.lock") }

func (a account) bridgeRunning() bool {
	if _, err := os.Stat(a.bridgeLockPath()); err != nil {
		return false
	}
	return lockHeld(a.bridgeLockPath())
}

// withSpool runs fn on the spool under its lock and saves it when fn reports
// a change.
func (a account) withSpool(fn func(*spoolFile) bool, logf func(string, ...any)) error {
	if err := ensureDir(a.spoolDir()); err != nil {
		return err
	}
	unlock, err := lockFileQuick(a.spoolLockPath())
	if err != nil {
		return fmt.Errorf("lock the spool: %w", err)
	}
	defer unlock()
	sp, err := a.readSpool()
	if err != nil {
		return err
	}
	if !fn(sp) {
		return nil
	}
	return a.writeSpool(sp, logf)
}

// readSpool starts an unreadable spool over.
func (a account) readSpool() (*spoolFile, error) {
	sp := &spoolFile{}
	b, err := os.ReadFile(a.spoolPath())
	if errors.Is(err, fs.ErrNotExist) {
		return sp, nil
	}
	if err != nil {
		return nil, err
	}
	if json.Unmarshal(b, sp) != nil {
		return &spoolFile{}, nil
	}
	return sp, nil
}

// writeSpool trims the spool to its bounds and saves it without fsync: a
// spool lost in a crash is fetched again.
func (a account) writeSpool(sp *spoolFile, logf func(string, ...any)) error {
	now := time.Now()
	drop := func(i int, why string) {
		n := sp.Notes[i]
		if logf != nil && n.DeliveredAt == nil {
			logf("spool: dropped note %d (%s) before it was delivered", n.Note.ID, why)
		}
	}
	sp.Notes = slices.DeleteFunc(sp.Notes, func(n spooledNote) bool {
		return n.Reported && n.DeliveredAt != nil && now.Sub(*n.DeliveredAt) > spoolKeepDone
	})
	for len(sp.Notes) > 0 && (len(sp.Notes) > spoolMaxNotes || now.Sub(sp.Notes[0].ReceivedAt) > spoolMaxAge) {
		why := "the spool holds its most notes"
		if now.Sub(sp.Notes[0].ReceivedAt) > spoolMaxAge {
			why = "older than a week"
		}
		drop(0, why)
		sp.Notes = sp.Notes[1:]
	}
	for {
		b, err := json.Marshal(sp)
		if err != nil {
			return err
		}
		if len(b) <= spoolMaxBytes || len(sp.Notes) == 0 {
			tmp := filepath.Join(a.spoolDir(), fmt.Sprintf(".spool.%d.tmp", os.Getpid()))
			if err := os.WriteFile(tmp, b, 0o600); err != nil {
				return err
			}
			return os.Rename(tmp, a.spoolPath())
		}
		drop(0, "the spool holds its most bytes")
		sp.Notes = sp.Notes[1:]
	}
}

func (sp *spoolFile) add(n relayedNote, now time.Time) bool {
	sp.LastEventID = max(sp.LastEventID, n.ID)
	if slices.ContainsFunc(sp.Notes, func(s spooledNote) bool { return s.Note.ID == n.ID }) {
		return false
	}
	sp.Notes = append(sp.Notes, spooledNote{Note: n, ReceivedAt: now})
	return true
}

func (sp *spoolFile) undelivered() []*spooledNote {
	var out []*spooledNote
	for i := range sp.Notes {
		if sp.Notes[i].DeliveredAt == nil {
			out = append(out, &sp.Notes[i])
		}
	}
	return out
}

func (sp *spoolFile) markDelivered(ids []int64, by string, now time.Time) {
	for i := range sp.Notes {
		if n := &sp.Notes[i]; n.DeliveredAt == nil && slices.Contains(ids, n.Note.ID) {
			n.DeliveredAt, n.By = &now, by
		}
	}
}

func (sp *spoolFile) toReport() []int64 {
	var ids []int64
	for _, n := range sp.Notes {
		if n.DeliveredAt != nil && !n.Reported {
			ids = append(ids, n.Note.ID)
		}
	}
	return ids
}

func (sp *spoolFile) markReported(ids []int64) {
	for i := range sp.Notes {
		if slices.Contains(ids, sp.Notes[i].Note.ID) {
			sp.Notes[i].Reported = true
		}
	}
}

// asMail groups spooled notes by session in the order they arrived.
func asMail(notes []*spooledNote) []sessionMail {
	var out []sessionMail
	for _, n := range notes {
		i := slices.IndexFunc(out, func(m sessionMail) bool {
			return m.SessionType == n.Note.SessionType && m.SessionID == n.Note.SessionID
		})
		if i < 0 {
			out = append(out, sessionMail{unreadSession: unreadSession{SessionType: n.Note.SessionType, SessionID: n.Note.SessionID}})
			i = len(out) - 1
		}
		out[i].Notes = append(out[i].Notes, n.Note.mailNote)
		out[i].Count++
	}
	return out
}
