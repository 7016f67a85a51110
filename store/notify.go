package store

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// NoteHub keeps, in memory, the id of the newest note of each session this
// replica has been asked about, current through LISTEN on NotesChannel, and
// whether the newest read receipt of its owners' notes is still the one it
// loaded (ReceiptsChannel says when not). Every replica runs one, so a web
// poll can answer "nothing new" without a query. Its one listening
// connection also hears the other live channels (PresenceChannel,
// ReceiptsChannel, ReadsChannel, SignOutChannel) and passes everything it
// hears to its HubListener: the owners' live streams.
//
// The hub only vouches for a session while its listening connection is up
// and the session was loaded after LISTEN took effect; otherwise Latest says
// "don't know" and callers ask the database. After a reconnect it reloads the
// sessions it tracks, since notifications sent while it was away are lost.
type NoteHub struct {
	store *Store
	log   *slog.Logger

	mu   sync.RWMutex
	live bool
	// gen changes whenever the hub goes down or comes back, so that a load
	// that started under another connection is not stored.
	gen     uint64
	entries map[int64]hubEntry
	ready   chan struct{}
	once    sync.Once
	// listener hears every notification on hubChannels and every change
	// of live; set under mu, called from the listening goroutine.
	listener HubListener

	// wake maps the other channels the hub listens on to their callbacks
	// (see OnNotify); fixed once Run starts.
	wake map[string]func()
	// lag hears how late each note's notification arrived (see ObserveLag).
	lag func(time.Duration)
	// sweepEvery is HubSweepInterval (tests shorten it).
	sweepEvery time.Duration
}

// Channels the hub listens to besides NotesChannel ("<session id>:<note
// id>"). Like it, their payloads carry ids only: a listener loads what it
// shows from the database, once per replica.
const (
	// PresenceChannel says what a presence sidebar shows may have changed
	// in a workspace: a status set or cleared, a profile claimed, a
	// connection revoked. Payload "<workspace id>".
	PresenceChannel = "osfoundry_presence"
	// ReceiptsChannel says an owner's note got a read receipt (an agent
	// read it). Payload "<session id>:<note id>"; ReadAgentMail sends it in
	// the statement that records the receipt.
	ReceiptsChannel = "osfoundry_receipts"
	// ReadsChannel says an owner's read mark in a session moved forward, so
	// their unread counts changed. Payload "<owner id>".
	ReadsChannel = "osfoundry_reads"
	// SignOutChannel says a signed-in cookie session ended. Payload its
	// sign-in id (a random id, not a credential).
	SignOutChannel = "osfoundry_signouts"
)

// hubChannels are the channels the hub LISTENs on.
var hubChannels = []string{NotesChannel, PresenceChannel, ReceiptsChannel, ReadsChannel, SignOutChannel}

// HubListener hears what the hub hears. Both methods are called from the
// hub's goroutines (its listening one and its sweep; HubLive also once from
// SetListener) and must not block.
type HubListener interface {
	// HubLive says whether the hub is listening. After false, notifications
	// are lost until the next true.
	HubLive(live bool)
	// HubNotify is one notification on one of the hub's channels.
	HubNotify(channel, payload string)
}

// SetListener makes l hear the hub, starting with whether it is listening now.
func (h *NoteHub) SetListener(l HubListener) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.listener = l
	l.HubLive(h.live)
}

type hubEntry struct {
	workspaceID int64 // 0 until loaded from the database
	latest      int64
	// receipt is the newest receipt on the session's owners' notes as last
	// loaded; it is vouched for only while receiptKnown. A receipt
	// notification clears receiptKnown (its payload names the note, not the
	// receipt) and bumps receiptSeq, so that a load that raced it is not
	// trusted either.
	receipt      int64
	receiptKnown bool
	receiptSeq   uint64
}

// HubApplicationName names the hub's listening connection in pg_stat_activity.
const HubApplicationName = "osfoundry-note-hub"

// Hub reconnect backoff bounds.
const (
	hubMinBackoff = 100 * time.Millisecond
	hubMaxBackoff = 10 * time.Second
)

// NewNoteHub returns a hub over the store's database; start it with Run.
func (s *Store) NewNoteHub(log *slog.Logger) *NoteHub {
	if log == nil {
		log = slog.Default()
	}
	return &NoteHub{store: s, log: log, entries: map[int64]hubEntry{}, ready: make(chan struct{}), sweepEvery: HubSweepInterval}
}

// OnNotify makes the hub listen on one more channel, on its one connection,
// and call fn for each notification there and after each (re)connection,
// since notifications sent while the hub was away are lost. fn runs on the
// hub's goroutine and must not block. Call it before Run.
func (h *NoteHub) OnNotify(channel string, fn func()) {
	if h.wake == nil {
		h.wake = map[string]func(){}
	}
	h.wake[channel] = fn
}

// ObserveLag makes the hub call fn with the lag of each note notification
// it hears: from just before the note's transaction committed to its
// arrival here (clocks of PostgreSQL and this replica; negative differences
// count as zero). fn runs on the hub's goroutine and must not block. Call it
// before Run.
func (h *NoteHub) ObserveLag(fn func(time.Duration)) { h.lag = fn }

// HubState is what the hub is doing, for metrics.
type HubState struct {
	// Listening is true while the listening connection is up: only then does
	// the hub answer for the sessions it tracks.
	Listening bool
	// Sessions counts the sessions it tracks (loaded by Track, kept current).
	Sessions int
}

// State returns whether the hub is listening and how many sessions it
// tracks. It walks the tracked sessions: for a scrape, not a request path.
func (h *NoteHub) State() HubState {
	sessions := len(h.trackedIDs())
	h.mu.RLock()
	defer h.mu.RUnlock()
	return HubState{Listening: h.live, Sessions: sessions}
}

// Ready is closed the first time the hub is listening.
func (h *NoteHub) Ready() <-chan struct{} { return h.ready }

// Latest returns the newest note id of a session of the workspace and true
// when the hub is sure of it; false means "ask the database".
func (h *NoteHub) Latest(workspaceID, sessionID int64) (int64, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	e, ok := h.entries[sessionID]
	if !h.live || !ok || e.workspaceID == 0 || e.workspaceID != workspaceID {
		return 0, false
	}
	return e.latest, true
}

// Track loads a session's newest note id (and newest receipt, see Marks)
// from the database and, while the hub is listening, keeps it current from
// then on. It returns the newest note id, or ErrNotFound when the session is
// not in the workspace.
func (h *NoteHub) Track(ctx context.Context, workspaceID, sessionID int64) (int64, error) {
	m, err := h.track(ctx, workspaceID, sessionID)
	return m.Note, err
}

// Marks returns the newest note and receipt ids of a session of the
// workspace: from memory when the hub is sure of both, else loaded (Track).
func (h *NoteHub) Marks(ctx context.Context, workspaceID, sessionID int64) (MailMarks, error) {
	h.mu.RLock()
	e, ok := h.entries[sessionID]
	sure := h.live && ok && e.workspaceID != 0 && e.workspaceID == workspaceID && e.receiptKnown
	h.mu.RUnlock()
	if sure {
		return MailMarks{Note: e.latest, Receipt: e.receipt}, nil
	}
	return h.track(ctx, workspaceID, sessionID)
}

func (h *NoteHub) track(ctx context.Context, workspaceID, sessionID int64) (MailMarks, error) {
	h.mu.RLock()
	gen, seq := h.gen, h.entries[sessionID].receiptSeq
	h.mu.RUnlock()
	ws, m, err := h.store.SessionMailMarks(ctx, sessionID)
	if err != nil {
		return MailMarks{}, err
	}
	if ws != workspaceID {
		return MailMarks{}, wrap("track session", pgx.ErrNoRows)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Loaded after LISTEN under the same connection: later notes will be
	// announced. A notification seen meanwhile may be newer than the load.
	if h.live && h.gen == gen {
		e := h.entries[sessionID]
		e.workspaceID, e.latest = ws, max(e.latest, m.Note)
		if e.receiptSeq == seq {
			e.receipt, e.receiptKnown = max(e.receipt, m.Receipt), true
		}
		h.entries[sessionID] = e
	}
	return m, nil
}

// receiptHeard makes the hub unsure of a tracked session's newest receipt.
func (h *NoteHub) receiptHeard(sessionID int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.entries[sessionID]; ok {
		e.receiptKnown = false
		e.receiptSeq++
		h.entries[sessionID] = e
	}
}

// Run listens until ctx ends, reconnecting with backoff when the connection
// drops. Its statements count as background work.
func (h *NoteHub) Run(ctx context.Context) {
	ctx = Background(ctx)
	backoff := hubMinBackoff
	for ctx.Err() == nil {
		start := time.Now()
		err := h.listen(ctx)
		h.setDown()
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			backoff = hubMinBackoff
		}
		h.log.Warn("note hub: listening connection lost; web polls query the database until it is back", "err", err, "retry_in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, hubMaxBackoff)
	}
}

func (h *NoteHub) setDown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.live = false
	h.gen++
	if h.listener != nil {
		h.listener.HubLive(false)
	}
}

// listen runs one connection: LISTEN, reload the tracked sessions, then
// apply notifications until the connection fails or ctx ends.
func (h *NoteHub) listen(ctx context.Context) error {
	cfg := h.store.pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = HubApplicationName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	listen := make([]string, len(hubChannels))
	for i, ch := range hubChannels {
		listen[i] = "LISTEN " + pgx.Identifier{ch}.Sanitize()
	}
	if _, err := conn.Exec(ctx, strings.Join(listen, "; ")); err != nil {
		return err
	}
	for ch := range h.wake {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	ids := h.trackedIDs()
	fresh, err := newestNotes(ctx, conn, ids)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.entries = fresh
	h.live = true
	h.gen++
	gen := h.gen
	l := h.listener
	if l != nil {
		l.HubLive(true)
	}
	h.mu.Unlock()
	h.once.Do(func() { close(h.ready) })
	h.log.Debug("note hub listening", "sessions", len(ids))
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go h.sweep(sweepCtx, gen)
	for _, fn := range h.wake {
		fn()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if fn, ok := h.wake[n.Channel]; ok {
			fn()
			continue
		}
		if l == nil {
			h.mu.RLock()
			l = h.listener
			h.mu.RUnlock()
		}
		if n.Channel == ReceiptsChannel {
			if sid, _, ok := ParseIDPair(n.Payload); ok {
				h.receiptHeard(sid)
			}
		}
		if n.Channel != NotesChannel {
			if l != nil {
				l.HubNotify(n.Channel, n.Payload)
			}
			continue
		}
		ids, sent, ok := splitNotePayload(n.Payload)
		var sid, nid int64
		if ok {
			sid, nid, ok = ParseIDPair(ids)
		}
		if !ok {
			h.log.Warn("note hub: unexpected payload", "payload", n.Payload)
			continue
		}
		if h.lag != nil && !sent.IsZero() {
			h.lag(max(time.Since(sent), 0))
		}
		h.mu.Lock()
		e := h.entries[sid]
		if nid > e.latest {
			e.latest = nid
			h.entries[sid] = e
		}
		h.mu.Unlock()
		if l != nil {
			l.HubNotify(n.Channel, ids)
		}
	}
}

// trackedIDs returns the sessions the hub tracks (loaded by Track).
func (h *NoteHub) trackedIDs() []int64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	ids := make([]int64, 0, len(h.entries))
	for id, e := range h.entries {
		if e.workspaceID != 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// newestNotes loads the workspace and newest note id of each session of ids.
func newestNotes(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, ids []int64) (map[int64]hubEntry, error) {
	rows, err := q.Query(ctx, `
		SELECT s.id, s.workspace_id, coalesce((SELECT max(n.id) FROM notes n WHERE n.session_id = s.id), 0)
		FROM sessions s WHERE s.id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fresh := make(map[int64]hubEntry, len(ids))
	for rows.Next() {
		var id int64
		var e hubEntry
		if err := rows.Scan(&id, &e.workspaceID, &e.latest); err != nil {
			return nil, err
		}
		fresh[id] = e
	}
	return fresh, rows.Err()
}

// HubSweepInterval is how often a listening hub re-reads the newest note of
// the sessions it tracks. A note's notification is sent after its commit
// (announce); should it never come (the writing process died in between,
// or the statement failed), the sweep finds the note, at most this late.
const HubSweepInterval = 10 * time.Second

// sweep re-reads the tracked sessions' newest notes every sweepEvery while
// the hub's connection of generation gen is up, and treats a note newer
// than the hub knew as if its notification had arrived.
func (h *NoteHub) sweep(ctx context.Context, gen uint64) {
	t := time.NewTicker(h.sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids := h.trackedIDs()
		if len(ids) == 0 {
			continue
		}
		fresh, err := newestNotes(ctx, h.store.pool, ids)
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("note hub: sweep failed", "err", err)
			}
			continue
		}
		var found []string
		h.mu.Lock()
		if h.gen != gen {
			h.mu.Unlock()
			return
		}
		for id, f := range fresh {
			if e := h.entries[id]; e.workspaceID != 0 && f.latest > e.latest {
				e.latest = f.latest
				h.entries[id] = e
				found = append(found, strconv.FormatInt(id, 10)+":"+strconv.FormatInt(f.latest, 10))
			}
		}
		l := h.listener
		h.mu.Unlock()
		for _, ids := range found {
			// Usually a notification still on its way; it changes nothing when it comes.
			h.log.Debug("note hub: sweep found a newer note", "note", ids)
			if l != nil {
				l.HubNotify(NotesChannel, ids)
			}
		}
	}
}

// ParseIDPair reads the "<session id>:<note id>" payload of ReceiptsChannel,
// and of NotesChannel as the hub passes it on (without the time it was sent).
func ParseIDPair(p string) (sessionID, noteID int64, ok bool) {
	a, b, found := strings.Cut(p, ":")
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.ParseInt(a, 10, 64)
	n, err2 := strconv.ParseInt(b, 10, 64)
	return s, n, err1 == nil && err2 == nil
}

// splitNotePayload splits a NotesChannel payload "<session id>:<note
// id>:<sent>" into its ids and the time it was sent (Unix microseconds,
// notifySent); a payload without the time (an older replica's) has the zero
// time.
func splitNotePayload(p string) (ids string, sent time.Time, ok bool) {
	if strings.Count(p, ":") < 2 {
		return p, time.Time{}, true
	}
	i := strings.LastIndexByte(p, ':')
	us, err := strconv.ParseInt(p[i+1:], 10, 64)
	if err != nil {
		return "", time.Time{}, false
	}
	return p[:i], time.UnixMicro(us), true
}

// notify sends one notification (payload: ids only) outside any transaction.
func (s *Store) notify(ctx context.Context, channel, payload string) error {
	_, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload)
	return err
}

// notice is a notification a write calls for, sent by announce once the
// write has committed.
type notice struct{ channel, payload string }

// noteNotice is the NotesChannel notification of a note: "<session
// id>:<note id>:<sent>", sent the Unix time in microseconds as it is
// announced, from which each replica's note hub measures how late it heard
// of the note.
func noteNotice(sessionID, noteID int64) notice {
	return notice{NotesChannel, strconv.FormatInt(sessionID, 10) + ":" + strconv.FormatInt(noteID, 10) + ":" +
		strconv.FormatInt(time.Now().UnixMicro(), 10)}
}

// announce queues the notifications of a write that has committed and
// returns at once: the write's caller does not wait for them. They go out in
// order, as one statement per batch, from a sender that runs while any are
// queued (announcer.send), in a transaction of their own whose commit does
// not wait for the WAL flush (synchronous_commit off: they are wake-ups,
// not data). Sent inside the write's transaction they would cost every
// writer of the database its turn: PostgreSQL serialises the commits of
// notifying transactions behind one lock held through the flush, which
// capped notifying writes near 400 a second on a 2-core machine
// (docs/performance.md); here the lock is held for an in-memory commit, once
// for all the writes that committed meanwhile.
//
// A notification that is lost (the statement failed, or the process died
// first) is made up for by the note hubs' sweep (HubSweepInterval), the
// live pages' periodic presence refresh and the webhook senders' own sweep.
func (s *Store) announce(_ context.Context, ns []notice) {
	if len(ns) == 0 {
		return
	}
	a := &s.announcer
	a.mu.Lock()
	a.queue = append(a.queue, ns...)
	start := !a.running
	a.running = true
	if start {
		a.senders.Add(1)
	}
	a.mu.Unlock()
	if start {
		go s.sendAnnounced()
	}
}

// announcer holds the notifications announce queued and whether a sender is
// sending them.
type announcer struct {
	mu      sync.Mutex
	queue   []notice
	running bool
	senders sync.WaitGroup
}

// maxAnnounceBatch bounds the notifications of one statement.
const maxAnnounceBatch = 1000

// sendAnnounced sends what announce queued, a batch per statement, until
// the queue is empty. Its statements count as background work.
func (s *Store) sendAnnounced() {
	a := &s.announcer
	defer a.senders.Done()
	ctx := Background(context.Background())
	for {
		a.mu.Lock()
		batch := a.queue
		if len(batch) > maxAnnounceBatch {
			batch = batch[:maxAnnounceBatch:maxAnnounceBatch]
		}
		a.queue = a.queue[len(batch):]
		if len(batch) == 0 {
			a.queue, a.running = nil, false
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
		channels, payloads := make([]string, 0, len(batch)), make([]string, 0, len(batch))
		seen := make(map[notice]bool, len(batch))
		for _, n := range batch {
			if !seen[n] { // PostgreSQL would fold repeats within a transaction anyway
				seen[n] = true
				channels, payloads = append(channels, n.channel), append(payloads, n.payload)
			}
		}
		if _, err := s.pool.Exec(ctx, `
			SELECT set_config('synchronous_commit', 'off', true), pg_notify(c, p)
			FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS n(c, p, i) ORDER BY i`, channels, payloads); err != nil {
			slog.Default().Warn("store: notifications after commit failed; the note hubs' sweep will catch up",
				"notifications", len(channels), "err", err)
		}
	}
}

// NotifySignOut tells every replica that the signed-in cookie session with
// this sign-in id ended, so that they close its live streams.
func (s *Store) NotifySignOut(ctx context.Context, signInID string) error {
	if err := s.notify(ctx, SignOutChannel, signInID); err != nil {
		return fmt.Errorf("store: notify sign-out: %w", err)
	}
	return nil
}
