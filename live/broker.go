// Package live is the broker of one replica's live streams. The replica's
// one LISTEN connection (store.Listener) hears every notification, ids
// only; the Broker, one of its subscribers, keeps the open streams of this
// replica in memory by session (the session page's stream) and by owner (the
// unread stream of the lists) and fans out:
//
//   - a note: loaded once per replica, rendered once per variant (the
//     sender's own row, everyone else's "new" row), framed once, sent to
//     every stream of the session (notes.go);
//   - presence: a workspace's notification (or the periodic refresh, for
//     tiers that change with time) reloads each watched project's agents
//     once and sends the sidebar to the streams whose version differs
//     (presence.go);
//   - a receipt: the note's receipts line, rendered once (notes.go);
//   - unread counts: one query per owner with a stream open, sent to all
//     of the owner's streams (the lists' counts, the navigation's inbox
//     count) (unread.go);
//   - a sign-out: every stream of that sign-in ends;
//   - a heartbeat, after re-checking that each stream may stay open (beat.go).
//
// The streams one sign-in, one owner and one client address may hold are
// bounded (Limits): past the first two, the oldest stream is closed; past
// the third, new streams are refused (ErrTooMany).
//
// Sending never blocks: each stream has a bounded buffer, and a stream whose
// buffer is full is closed (the browser reconnects with Last-Event-ID and
// replays). While the listener is disconnected, notifications are lost, so
// every stream is closed and new ones are refused until it is connected
// again: browsers fall back to polling and reconnect, replaying what they
// missed. Nothing here holds a database connection between events.
//
// The broker reads the database through Source and renders through the
// functions of Render; the HTTP endpoints that serve the streams are the
// handlers'.
package live

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// Source is what the broker reads from the database (a *store.Store).
type Source interface {
	SessionMailAfter(ctx context.Context, workspaceID, sessionID, afterID int64) ([]store.Note, error)
	NoteReceipts(ctx context.Context, workspaceID, sessionID int64, noteIDs []int64) ([]store.Receipt, error)
	SessionMailMarks(ctx context.Context, sessionID int64) (workspaceID int64, m store.MailMarks, err error)
	GetProject(ctx context.Context, workspaceID, id int64) (*store.Project, error)
	ListSeatedAgents(ctx context.Context, workspaceID, projectID int64) ([]store.SeatedAgent, error)
	UnreadMail(ctx context.Context, workspaceID, ownerID int64) ([]store.SessionUnread, error)
	UnreadMailIn(ctx context.Context, ownerIDs, sessionIDs []int64) ([]store.OwnerSessionUnread, error)
	OwnerSees(ctx context.Context, ownerID, workspaceID, sessionID int64) (bool, error)
}

// Render makes the HTML the events carry, as the pages render it.
type Render struct {
	// Note is a note's row, for its sender (own) or for the other owners,
	// to whom it is new.
	Note func(now time.Time, sessionID int64, n store.Note, own bool) ([]byte, error)
	// Receipts is a note's receipts line, out of band.
	Receipts func(now time.Time, noteID int64, receipts []store.Receipt) ([]byte, error)
	// Presence is a session's presence sidebar.
	Presence func(now time.Time, sessionID int64, p store.Project, agents []store.SeatedAgent) Sidebar
}

// Sidebar is a presence sidebar: its version (the fingerprint a page
// shows), and its HTML, rendered only when a stream needs it.
type Sidebar struct {
	Version string
	HTML    func() ([]byte, error)
}

// Options are what New needs; zero settings are the defaults.
type Options struct {
	Source Source
	Render Render
	Log    *slog.Logger
	// Heartbeat is how often idle streams get a comment line, and how often
	// each stream's right to stay open is checked again (20 s).
	Heartbeat time.Duration
	// PresenceRefresh is how often watched sidebars are recomputed for the
	// changes no notification announces: tiers that age, "updated N min
	// ago" (10 s).
	PresenceRefresh time.Duration
	// Buffer is how many events a stream may have waiting; one more and it
	// is closed (64).
	Buffer int
	// Limits bound the streams held at once (DefaultLimits).
	Limits Limits
}

// Limits bound the streams held at once, so that one cookie or one address
// cannot take the server's connections and memory: a sign-in or an owner
// past its limit has its oldest stream closed (the page behind it polls),
// an address past its limit is refused new ones. A zero field is its
// default.
type Limits struct {
	PerSignIn, PerOwner, PerAddress int
}

// DefaultLimits are the limits of the streams held at once: a browser
// with many tabs, an owner with a few devices, an office behind one
// address.
var DefaultLimits = Limits{PerSignIn: 8, PerOwner: 16, PerAddress: 64}

// Defaults of the options.
const (
	defaultHeartbeat       = 20 * time.Second
	defaultPresenceRefresh = 10 * time.Second
	defaultBuffer          = 64
)

// MaxReplay is how many missed notes a reconnecting stream replays; past
// that, one reload event tells the page to load its list again.
const MaxReplay = 100

// Why a stream was closed by the broker.
const (
	closeOverflow  = "overflow"
	closeDown      = "listener down"
	closeSignOut   = "sign-out"
	closeForbidden = "no longer allowed"
	closeShutdown  = "shutdown"
	closeBehind    = "behind"
	closeReplaced  = "replaced by a newer stream"
)

// ErrDown refuses a stream while the listener is disconnected or the broker
// is closed: the page polls and its stream retries.
var ErrDown = errors.New("live: streams are unavailable")

// ErrTooMany refuses a stream from a client address that holds as many as
// Limits.PerAddress allows.
var ErrTooMany = errors.New("live: too many streams from this address")

// Broker holds one replica's open streams and feeds them.
type Broker struct {
	src    Source
	render Render
	log    *slog.Logger
	ctx    context.Context
	// stop cancels ctx: the streams end, the workers stop.
	stop          context.CancelFunc
	heartbeat     time.Duration
	presenceEvery time.Duration
	buffer        int
	limits        Limits
	start         sync.Once
	// wakeNotes and wakeUpkeep tell the two workers there is work pending.
	wakeNotes  chan struct{}
	wakeUpkeep chan struct{}

	mu     sync.Mutex
	up     bool // the listener is connected
	closed bool // shut down
	// sessions are the session streams by session id, signIns every stream
	// by sign-in id, byOwner every stream by owner id (each hears its
	// owner's unread counts), byAddr how many each client address holds.
	sessions map[int64]*sessionTopic
	signIns  map[int64]map[*Stream]struct{}
	byOwner  map[int64]map[*Stream]struct{}
	byAddr   map[string]int
	// seq numbers the streams in the order they opened.
	seq uint64
	// Work for the workers: sessions with new notes, receipts per
	// session, workspaces whose presence may have changed, owners whose
	// unread counts may have, sessions with new notes whose workspace's
	// unread streams must recount.
	pendingNotes    map[int64]struct{}
	pendingReceipts map[int64]map[int64]struct{}
	dirtyPresence   map[int64]struct{}
	dirtyUnread     map[int64]struct{}
	unreadSessions  map[int64]struct{}
	// sessionWorkspace remembers each session's workspace (it never changes).
	sessionWorkspace map[int64]int64
	// unreadOf is each owner's unread counts as last counted, by session
	// (those with any), while the owner has streams: new notes recount
	// only their sessions (unread.go).
	unreadOf map[int64]map[int64]store.SessionUnread
}

type sessionTopic struct {
	workspaceID int64
	projectID   int64
	streams     map[*Stream]struct{}
	// last is the newest note sent to the session's streams.
	last int64
	// presence and presenceEvent are the sidebar version last computed and its event.
	presence      string
	presenceEvent []byte
}

// New returns a broker; it hears nothing until Hear.
func New(o Options) *Broker {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	ctx, stop := context.WithCancel(context.Background())
	b := &Broker{
		src: o.Source, render: o.Render, log: o.Log, ctx: ctx, stop: stop,
		heartbeat: o.Heartbeat, presenceEvery: o.PresenceRefresh, buffer: o.Buffer, limits: o.Limits,
		wakeNotes: make(chan struct{}, 1), wakeUpkeep: make(chan struct{}, 1),
		sessions: map[int64]*sessionTopic{}, signIns: map[int64]map[*Stream]struct{}{},
		byOwner: map[int64]map[*Stream]struct{}{}, byAddr: map[string]int{},
		pendingNotes: map[int64]struct{}{}, pendingReceipts: map[int64]map[int64]struct{}{},
		dirtyPresence: map[int64]struct{}{}, dirtyUnread: map[int64]struct{}{}, unreadSessions: map[int64]struct{}{},
		unreadOf:         map[int64]map[int64]store.SessionUnread{},
		sessionWorkspace: map[int64]int64{},
	}
	if b.heartbeat == 0 {
		b.heartbeat = defaultHeartbeat
	}
	if b.presenceEvery == 0 {
		b.presenceEvery = defaultPresenceRefresh
	}
	if b.buffer == 0 {
		b.buffer = defaultBuffer
	}
	if b.limits.PerSignIn == 0 {
		b.limits.PerSignIn = DefaultLimits.PerSignIn
	}
	if b.limits.PerOwner == 0 {
		b.limits.PerOwner = DefaultLimits.PerOwner
	}
	if b.limits.PerAddress == 0 {
		b.limits.PerAddress = DefaultLimits.PerAddress
	}
	return b
}

// Hear subscribes the broker to the listener's live topics and state.
func (b *Broker) Hear(l *store.Listener) {
	store.Listen(l, store.NoteTopic, b.noteHeard)
	store.Listen(l, store.ReceiptTopic, b.receiptHeard)
	store.Listen(l, store.PresenceTopic, b.presenceHeard)
	store.Listen(l, store.ReadsTopic, b.readsHeard)
	store.Listen(l, store.SignOutTopic, b.signedOut)
	l.Watch(b.connected)
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// connected hears the listener's state: disconnected, every stream is closed.
func (b *Broker) connected(up bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.up = up
	if !up {
		b.dropAll(closeDown)
	}
}

// The handlers of the listener's topics record the work and wake a worker,
// never blocking the listener.

func (b *Broker) noteHeard(n store.NoteNotice) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, watched := b.sessions[n.SessionID]; watched {
		b.pendingNotes[n.SessionID] = struct{}{}
		wake(b.wakeNotes)
	}
	if len(b.byOwner) > 0 {
		b.unreadSessions[n.SessionID] = struct{}{}
		wake(b.wakeUpkeep)
	}
}

func (b *Broker) receiptHeard(r store.NoteRef) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, watched := b.sessions[r.SessionID]; !watched {
		return
	}
	if b.pendingReceipts[r.SessionID] == nil {
		b.pendingReceipts[r.SessionID] = map[int64]struct{}{}
	}
	b.pendingReceipts[r.SessionID][r.NoteID] = struct{}{}
	wake(b.wakeNotes)
}

func (b *Broker) presenceHeard(workspaceID int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dirtyPresence[workspaceID] = struct{}{}
	wake(b.wakeUpkeep)
}

func (b *Broker) readsHeard(ownerID int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byOwner[ownerID] != nil {
		b.dirtyUnread[ownerID] = struct{}{}
		wake(b.wakeUpkeep)
	}
}

func (b *Broker) signedOut(signInID int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for st := range b.signIns[signInID] {
		b.drop(st, closeSignOut)
	}
}

// Close ends every stream and stops the workers: the server is shutting
// down, and its drain must not wait for streams.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	b.dropAll(closeShutdown)
	b.mu.Unlock()
	b.stop()
}

// Subscribe registers a stream; a session stream names its session's
// project and newest note. It returns ErrDown while the listener is
// disconnected or the broker is closed, and ErrTooMany when the stream's
// address holds as many as it may; past the limit of its sign-in or its
// owner, their oldest stream is closed.
func (b *Broker) Subscribe(st *Stream, projectID, latest int64) error {
	b.start.Do(func() {
		go b.sendNotes()
		go b.upkeep()
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.up || b.closed {
		return ErrDown
	}
	if b.byAddr[st.addr] >= b.limits.PerAddress {
		return ErrTooMany
	}
	b.seq++
	st.seq = b.seq
	b.byAddr[st.addr]++
	b.trim(addStream(b.signIns, st.signIn, st), b.limits.PerSignIn)
	b.trim(addStream(b.byOwner, st.ownerID, st), b.limits.PerOwner)
	if st.sessionID == 0 {
		return nil
	}
	b.sessionWorkspace[st.sessionID] = st.workspaceID
	t := b.sessions[st.sessionID]
	if t == nil {
		t = &sessionTopic{workspaceID: st.workspaceID, projectID: projectID, streams: map[*Stream]struct{}{}, last: latest}
		b.sessions[st.sessionID] = t
		// A first look at the sidebar, in case it changed since the page was drawn.
		b.dirtyPresence[st.workspaceID] = struct{}{}
		wake(b.wakeUpkeep)
	}
	t.streams[st] = struct{}{}
	if t.presenceEvent != nil && t.presence != st.presence {
		st.presence = t.presence
		b.send(st, Event{Data: t.presenceEvent})
	}
	return nil
}

// addStream adds st to the set of key in m and returns the set.
func addStream(m map[int64]map[*Stream]struct{}, key int64, st *Stream) map[*Stream]struct{} {
	set := m[key]
	if set == nil {
		set = map[*Stream]struct{}{}
		m[key] = set
	}
	set[st] = struct{}{}
	return set
}

// trim closes the oldest streams of set until it holds at most limit.
// b.mu is held.
func (b *Broker) trim(set map[*Stream]struct{}, limit int) {
	for len(set) > limit {
		var oldest *Stream
		for st := range set {
			if oldest == nil || st.seq < oldest.seq {
				oldest = st
			}
		}
		b.drop(oldest, closeReplaced)
	}
}

// removeStream takes st out of the set of key in m.
func removeStream(m map[int64]map[*Stream]struct{}, key int64, st *Stream) {
	if set := m[key]; set != nil {
		delete(set, st)
		if len(set) == 0 {
			delete(m, key)
		}
	}
}

// Unsubscribe forgets a stream that ended on its own (the client left).
func (b *Broker) Unsubscribe(st *Stream) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drop(st, "")
}

// send queues an event without blocking; a full buffer closes the stream.
// b.mu is held.
func (b *Broker) send(st *Stream, ev Event) {
	select {
	case st.events <- ev:
	default:
		b.drop(st, closeOverflow)
	}
}

// drop removes a stream and, unless it left by itself (why ""), closes it
// with a reason. b.mu is held.
func (b *Broker) drop(st *Stream, why string) {
	select {
	case <-st.done:
		return
	default:
	}
	st.why = why
	close(st.done)
	removeStream(b.signIns, st.signIn, st)
	removeStream(b.byOwner, st.ownerID, st)
	if b.byOwner[st.ownerID] == nil {
		delete(b.unreadOf, st.ownerID)
	}
	if b.byAddr[st.addr]--; b.byAddr[st.addr] <= 0 {
		delete(b.byAddr, st.addr)
	}
	if st.sessionID == 0 {
		return
	}
	if t := b.sessions[st.sessionID]; t != nil {
		delete(t.streams, st)
		if len(t.streams) == 0 {
			delete(b.sessions, st.sessionID)
		}
	}
}

// dropAll closes every stream and forgets pending work. b.mu is held.
func (b *Broker) dropAll(why string) {
	for _, set := range b.signIns {
		for st := range set {
			b.drop(st, why)
		}
	}
	clear(b.pendingNotes)
	clear(b.pendingReceipts)
}

// Open counts the streams held now, for the live streams gauge of the
// metrics (read at each scrape).
func (b *Broker) Open() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, set := range b.signIns {
		n += len(set)
	}
	return n
}

// Count is how many streams of the session the broker holds; sessionID 0
// counts the unread streams.
func (b *Broker) Count(sessionID int64) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if sessionID == 0 {
		n := 0
		for _, set := range b.byOwner {
			for st := range set {
				if st.sessionID == 0 {
					n++
				}
			}
		}
		return n
	}
	if t := b.sessions[sessionID]; t != nil {
		return len(t.streams)
	}
	return 0
}
