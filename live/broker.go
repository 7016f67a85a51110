// Package live feeds one replica's open event streams from its LISTEN
// connection: each note, receipt, presence change and unread count is
// loaded, rendered and framed once, and sent without blocking (a full buffer
// closes the stream; the browser reconnects with Last-Event-ID).
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
	Note     func(now time.Time, sessionID int64, n store.Note, own bool) ([]byte, error)
	Receipts func(now time.Time, noteID int64, receipts []store.Receipt) ([]byte, error)
	Presence func(now time.Time, sessionID int64, p store.Project, agents []store.SeatedAgent) Sidebar
}

// Sidebar is a presence sidebar's version and its HTML, rendered only when a stream needs it.
type Sidebar struct {
	Version string
	HTML    func() ([]byte, error)
}

// Options are what New needs; zero settings are the defaults.
type Options struct {
	Source    Source
	Render    Render
	Log       *slog.Logger
	Heartbeat time.Duration // also paces the re-check of each stream's right to stay open (20 s)
	// PresenceRefresh recomputes what ages without a notification: tiers, "updated N min ago" (10 s).
	PresenceRefresh time.Duration
	Buffer          int // events a stream may have waiting; one more closes it (64)
	Limits          Limits
}

const (
	defaultHeartbeat       = 20 * time.Second
	defaultPresenceRefresh = 10 * time.Second
	defaultBuffer          = 64
)

// MaxReplay is how many missed notes a reconnecting stream replays; past it the page reloads its list.
const MaxReplay = 100

const (
	closeOverflow  = "overflow"
	closeDown      = "listener down"
	closeSignOut   = "sign-out"
	closeForbidden = "no longer allowed"
	closeShutdown  = "shutdown"
	closeBehind    = "behind"
	closeReplaced  = "replaced by a newer stream"
)

// ErrDown refuses a stream while the listener is away or the broker closed: the page polls.
var ErrDown = errors.New("live: streams are unavailable")

// Broker holds one replica's open streams and feeds them.
type Broker struct {
	src           Source
	render        Render
	log           *slog.Logger
	ctx           context.Context
	stop          context.CancelFunc // cancels ctx: the streams end, the workers stop
	heartbeat     time.Duration
	presenceEvery time.Duration
	buffer        int
	limits        Limits
	start         sync.Once

	// The queues and the cache have locks of their own, taken after mu, never before it.
	notes      *noteQueue
	work       *upkeepQueue
	workspaces *sessionWorkspaces

	mu       sync.Mutex // guards the indexes below and each Stream's presence and unread
	up       bool       // the listener is connected
	closed   bool
	seq      uint64 // orders the streams by opening
	sessions sessionTopics
	signIns  streamSets
	owners   ownerStreams
	addrs    addressCounts
}

// New returns a broker; it hears nothing until Hear.
func New(o Options) *Broker {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	ctx, stop := context.WithCancel(context.Background())
	b := &Broker{
		src: o.Source, render: o.Render, log: o.Log, ctx: ctx, stop: stop,
		heartbeat: o.Heartbeat, presenceEvery: o.PresenceRefresh, buffer: o.Buffer, limits: o.Limits.orDefault(),
		notes: newNoteQueue(), work: newUpkeepQueue(), workspaces: &sessionWorkspaces{m: map[int64]int64{}},
		sessions: sessionTopics{}, signIns: streamSets{}, owners: newOwnerStreams(), addrs: addressCounts{},
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

// connected closes every stream while the listener is away: its notifications are lost.
func (b *Broker) connected(up bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.up = up
	if !up {
		b.dropAll(closeDown)
	}
}

// The listener's handlers only queue work, so that they never block it.

func (b *Broker) noteHeard(n store.NoteNotice) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, watched := b.sessions[n.SessionID]; watched {
		b.notes.noteArrived(n.SessionID)
	}
	if len(b.owners.streams) > 0 {
		b.work.notesArrived(n.SessionID)
	}
}

func (b *Broker) receiptHeard(r store.NoteRef) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, watched := b.sessions[r.SessionID]; watched {
		b.notes.receiptChanged(r.SessionID, r.NoteID)
	}
}

func (b *Broker) presenceHeard(workspaceID int64) { b.work.presenceChanged(workspaceID) }

func (b *Broker) readsHeard(ownerID int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.owners.streams[ownerID] != nil {
		b.work.readsMoved(ownerID)
	}
}

func (b *Broker) signedOut(signInID int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for st := range b.signIns[signInID] {
		b.drop(st, closeSignOut)
	}
}

// Close ends every stream and stops the workers, so that the drain need not wait for them.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	b.dropAll(closeShutdown)
	b.mu.Unlock()
	b.stop()
}
