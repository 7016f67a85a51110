package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The bridge's relay: one event stream per bridge process (GET /agent/events),
// whose notes go into the spool for the hooks and, when Claude Code listens,
// into the conversation as channel notifications; what was delivered is
// reported back (POST /agent/delivered) for the owners to see.

// Relay timing.
const (
	relayMinBackoff  = 500 * time.Millisecond
	relayMaxBackoff  = 30 * time.Second
	relayRevokedWait = time.Minute      // a login in the checkout may bring new credentials
	relayIdle        = 65 * time.Second // the server sends a heartbeat every 20 s
	relayReportEvery = 200 * time.Millisecond
)

// channelEnv=1 in the MCP entry's environment says the client listens to
// channels, so a note sent as a channel notification counts as delivered and
// the hooks leave it out; otherwise the hooks deliver it.
const channelEnv = "OSFOUNDRY_CHANNEL"

type relayState struct {
	mu          sync.Mutex
	initialized bool // notifications may go to the client
	channel     bool // channelEnv is set
}

// startRelay starts the bridge's relay; stop waits for its last delivery report.
func (b *bridge) startRelay(ctx context.Context) (stop func()) {
	b.relay.channel = os.Getenv(channelEnv) == "1"
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.runRelay(ctx) }()
	return func() { cancel(); <-done }
}

// relayLog writes to stderr, which Claude Code keeps in its MCP log.
func (b *bridge) relayLog(format string, a ...any) {
	fmt.Fprintf(b.log, "osfoundry agent mcp: relay: "+format+"\n", a...)
}

func (b *bridge) runRelay(ctx context.Context) {
	if err := ensureDir(b.acct.spoolDir()); err != nil {
		b.relayLog("%v", err)
		return
	}
	release, err := holdShared(b.acct.bridgeLockPath())
	if err != nil {
		b.relayLog("no relay: %v", err)
		return
	}
	defer release()
	// Streams of bridges that were killed are forgotten.
	b.acct.withSpool(func(sp *spoolFile) bool {
		n := len(sp.Streams)
		sp.Streams = slices.DeleteFunc(sp.Streams, func(p int) bool { return !processAlive(p) })
		return len(sp.Streams) != n
	}, nil)
	defer b.setConnected(false)
	reported := make(chan struct{})
	go func() { defer close(reported); b.reportDeliveries(ctx) }()
	defer func() { <-reported }()
	backoff := relayMinBackoff
	refused := ""
	for ctx.Err() == nil {
		started := time.Now()
		err := b.relayOnce(ctx, &refused)
		if ctx.Err() != nil {
			return
		}
		b.setConnected(false)
		if time.Since(started) > time.Minute {
			backoff = relayMinBackoff
		}
		wait := backoff/2 + rand.N(backoff/2+1) // jitter: half to all of it
		var revoked *revokedError
		switch {
		case errors.Is(err, errRelayRenew):
			wait = 0 // a fresh token, at once
		case errors.As(err, &revoked):
			wait = relayRevokedWait
		}
		if err != nil && !errors.Is(err, errRelayRenew) {
			b.relayLog("%v; again in %s", err, wait.Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		backoff = min(backoff*2, relayMaxBackoff)
	}
}

// errRelayRenew ends a stream whose token was refused or expired; the relay
// reconnects at once with a fresh one.
var errRelayRenew = errors.New("the token needs renewing")

// relayOnce holds one stream until it ends. refused is the token the server
// last refused.
func (b *bridge) relayOnce(ctx context.Context, refused *string) error {
	c, err := b.loadClient()
	if err != nil {
		return err
	}
	tok, err := c.token(ctx, *refused)
	if err != nil {
		return err
	}
	*refused = ""
	var last int64
	if err := b.acct.withSpool(func(sp *spoolFile) bool { last = sp.LastEventID; return false }, nil); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.acct.server+"/agent/events", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("User-Agent", userAgent)
	if last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
	}
	res, err := b.http.Do(req)
	if err != nil {
		return &unreachableError{Server: b.acct.server, Err: err}
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusUnauthorized:
		*refused = tok
		return errRelayRenew
	case res.StatusCode != http.StatusOK:
		return fmt.Errorf("GET /agent/events answered HTTP %d", res.StatusCode)
	}
	b.setConnected(true)
	idle := time.AfterFunc(relayIdle, cancel)
	defer idle.Stop()
	return readRelay(res, func(name string, data []byte) error {
		idle.Reset(relayIdle)
		switch name {
		case "note":
			var n relayedNote
			if json.Unmarshal(data, &n) != nil || n.ID <= 0 {
				return nil
			}
			b.noteArrived(n)
		case "revoked":
			var m struct{ Message string }
			json.Unmarshal(data, &m)
			b.acct.withSpool(func(sp *spoolFile) bool { sp.Revoked = m.Message; return true }, nil)
			return &revokedError{Server: b.acct.server}
		case "expired":
			*refused = tok
			return errRelayRenew
		case "replaced":
			return errors.New("newer streams of this connection took this one's place")
		}
		return nil
	}, func() { idle.Reset(relayIdle) })
}

// readRelay hands each named event to fn and each comment line (the
// heartbeat) to beat.
func readRelay(res *http.Response, fn func(name string, data []byte) error, beat func()) error {
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	name, data := "", []byte(nil)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if name != "" || len(data) > 0 {
				if name == "" {
					name = "message"
				}
				if err := fn(name, data); err != nil {
					return err
				}
			}
			name, data = "", data[:0]
		case line[0] == ':':
			beat()
		case bytes.HasPrefix(line, []byte("event:")):
			name = strings.TrimSpace(string(line[len("event:"):]))
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("the relay stream broke: %w", err)
	}
	return errors.New("the relay stream ended")
}

// setConnected records whether this bridge's stream is open: the hooks read
// the spool only while one is.
func (b *bridge) setConnected(up bool) {
	pid := os.Getpid()
	b.acct.withSpool(func(sp *spoolFile) bool {
		had := slices.Contains(sp.Streams, pid)
		switch {
		case up && !had:
			sp.Streams = append(sp.Streams, pid)
		case !up && had:
			sp.Streams = slices.DeleteFunc(sp.Streams, func(p int) bool { return p == pid })
		case !up:
			return false
		}
		if up {
			sp.Revoked = ""
		}
		return true
	}, nil)
}

func (b *bridge) noteArrived(n relayedNote) {
	now := time.Now()
	var fresh bool
	err := b.acct.withSpool(func(sp *spoolFile) bool { fresh = sp.add(n, now); return fresh }, b.relayLog)
	if err != nil {
		b.relayLog("spool note %d: %v", n.ID, err)
		return
	}
	if fresh {
		b.sendChannel()
	}
}

func (b *bridge) channelReady() {
	b.relay.mu.Lock()
	b.relay.initialized = true
	b.relay.mu.Unlock()
	b.sendChannel()
}

// sendChannel sends each spooled note no notification carried yet as
// notifications/claude/channel.
func (b *bridge) sendChannel() {
	b.relay.mu.Lock()
	ready, listens := b.relay.initialized, b.relay.channel
	defer b.relay.mu.Unlock() // held: notifications go out in order, each once
	if !ready {
		return
	}
	var out []relayedNote
	b.acct.withSpool(func(sp *spoolFile) bool {
		changed := false
		for i := range sp.Notes {
			n := &sp.Notes[i]
			if n.Channeled || n.DeliveredAt != nil {
				continue
			}
			n.Channeled, changed = true, true
			out = append(out, n.Note)
			if listens {
				sp.markDelivered([]int64{n.Note.ID}, "channel", time.Now())
			}
		}
		return changed
	}, b.relayLog)
	for _, n := range out {
		text, _ := formatNotes("osFoundry Team mail: %s addressed to this agent just arrived (read_session_mail shows it and marks it read).\n",
			1, asMail([]*spooledNote{{Note: n}}))
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/claude/channel", "params": map[string]any{
			"content": text,
			"meta":    map[string]string{"sender": oneLine(n.From), "session": oneLine(n.SessionType + " " + n.SessionID), "note_id": strconv.FormatInt(n.ID, 10)},
		}})
		b.write(msg)
	}
}

// declareChannel adds capabilities.experimental["claude/channel"] to an
// initialize result, so that Claude Code registers its channel listener.
func declareChannel(msg []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(m["result"], &res) != nil {
		return msg
	}
	var caps map[string]json.RawMessage
	json.Unmarshal(res["capabilities"], &caps)
	if caps == nil {
		caps = map[string]json.RawMessage{}
	}
	var exp map[string]json.RawMessage
	json.Unmarshal(caps["experimental"], &exp)
	if exp == nil {
		exp = map[string]json.RawMessage{}
	}
	exp["claude/channel"] = json.RawMessage(`{}`)
	caps["experimental"], _ = json.Marshal(exp)
	res["capabilities"], _ = json.Marshal(caps)
	m["result"], _ = json.Marshal(res)
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

// reportDeliveries tells the server which spooled notes went into the
// agent's context. It reports once more when the bridge stops: a client ends
// its bridge right after the turn whose Stop hook delivered the last note.
func (b *bridge) reportDeliveries(ctx context.Context) {
	t := time.NewTicker(relayReportEvery)
	defer t.Stop()
	var seen time.Time
	for {
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			b.reportOnce(last, time.Time{})
			cancel()
			return
		case <-t.C:
		}
		seen = b.reportOnce(ctx, seen)
	}
}

// reportOnce reports what the spool delivered since its modification time seen.
func (b *bridge) reportOnce(ctx context.Context, seen time.Time) time.Time {
	fi, err := os.Stat(b.acct.spoolPath())
	if err != nil || fi.ModTime().Equal(seen) {
		return seen
	}
	var ids []int64
	b.acct.withSpool(func(sp *spoolFile) bool { ids = sp.toReport(); return false }, nil)
	if len(ids) == 0 {
		return fi.ModTime()
	}
	if len(ids) > 100 {
		ids = ids[:100]
	}
	if err := b.report(ctx, ids); err != nil {
		b.relayLog("report deliveries: %v", err)
		return time.Time{} // try again at the next tick
	}
	b.acct.withSpool(func(sp *spoolFile) bool { sp.markReported(ids); return true }, nil)
	return fi.ModTime()
}

func (b *bridge) report(ctx context.Context, ids []int64) error {
	c, err := b.loadClient()
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"note_ids": ids})
	for attempt := 0; ; attempt++ {
		tok, err := c.token(ctx, "")
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b.acct.server+"/agent/delivered", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", userAgent)
		res, err := b.http.Do(req)
		if err != nil {
			cancel()
			return &unreachableError{Server: b.acct.server, Err: err}
		}
		res.Body.Close()
		cancel()
		switch {
		case res.StatusCode == http.StatusOK:
			return nil
		case res.StatusCode == http.StatusUnauthorized && attempt == 0:
			if _, err := c.token(ctx, tok); err != nil {
				return err
			}
		default:
			return fmt.Errorf("POST /agent/delivered answered HTTP %d", res.StatusCode)
		}
	}
}
