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

// The bridge's relay: one event stream per bridge process (GET
// /agent/events on the server, the bridge's bearer token), reconnecting
// with backoff and jitter and resuming with Last-Event-ID, whose notes go
// into the spool (spool.go) for the hooks, and, when Claude Code listens to
// channels, straight into the conversation as notifications/claude/channel.
// What the hooks or the channel delivered, the relay reports to the server
// (POST /agent/delivered), so that owners see it in the agent's context.

// Relay timing.
const (
	relayMinBackoff = 500 * time.Millisecond
	relayMaxBackoff = 30 * time.Second
	// relayRevokedWait is how long a revoked connection waits before it
	// tries again (a login in the checkout brings new credentials).
	relayRevokedWait = time.Minute
	// relayIdle ends a stream that sent nothing, not even a heartbeat
	// (every 20 s), for this long: the connection is dead.
	relayIdle = 65 * time.Second
	// relayReportEvery is how often the spool is looked at for deliveries
	// to report.
	relayReportEvery = 200 * time.Millisecond
)

// channelEnv, set to 1 in the MCP entry's environment, says the client
// listens to channels (Claude Code started with its channel flag): a note
// sent as a channel notification then counts as delivered, and the hooks
// leave it out. Without it the notification is still sent (a client that
// does not listen drops it) and the hooks deliver the note.
const channelEnv = "OSFOUNDRY_CHANNEL"

// relayState is what the relay keeps beside the bridge.
type relayState struct {
	mu sync.Mutex
	// initialized: the client sent notifications/initialized, so
	// notifications may go to it.
	initialized bool
	channel     bool // channelEnv is set
}

// startRelay starts the bridge's relay; it ends with ctx or with stop,
// which waits for its last delivery report.
func (b *bridge) startRelay(ctx context.Context) (stop func()) {
	b.relay.channel = os.Getenv(channelEnv) == "1"
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.runRelay(ctx) }()
	// Stopping waits for the last delivery report (bounded in reportDeliveries).
	return func() { cancel(); <-done }
}

// relayLog writes a line to the bridge's log (Claude Code keeps a stdio
// server's stderr in its MCP log).
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

// errRelayRenew ends a stream whose token must be replaced (refused or
// expired): the relay reconnects at once with a fresh one.
var errRelayRenew = errors.New("the token needs renewing")

// relayOnce holds one stream until it ends. refused is the token the
// server last refused, which the next token must replace.
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

// readRelay reads server-sent events, handing each named event to fn (a
// comment line, the heartbeat, to beat) until fn returns an error or the
// stream ends.
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

// setConnected records in the spool whether this bridge's stream is open:
// the hooks read the spool only while one is.
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

// noteArrived spools a note and, once the client is ready, sends it as a
// channel notification.
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

// channelReady is called when the client has initialized: what the
// spool holds undelivered goes out as channel notifications.
func (b *bridge) channelReady() {
	b.relay.mu.Lock()
	b.relay.initialized = true
	b.relay.mu.Unlock()
	b.sendChannel()
}

// sendChannel sends each spooled note no channel notification carried yet
// as notifications/claude/channel: content the fenced note, meta its
// sender, session and id. Where the client listens (channelEnv) that is
// its delivery.
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

// reportDeliveries tells the server, as they happen, which spooled notes
// went into the agent's context (by a hook or the channel). When the bridge
// stops it reports once more, briefly: a client ends its bridge right after
// the turn whose Stop hook delivered the last note.
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

// reportOnce reports what the spool delivered since it last changed (seen,
// its modification time then) and returns the time to compare next.
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

// report posts one delivery report.
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
