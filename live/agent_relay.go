package live

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// AgentRelay feeds one replica's agent event streams (GET /agent/events),
// one per running bridge, by connection: a note addressed to a connection
// goes to each of its streams, loaded and framed once, and a revoked
// connection's streams end. Like the Broker it never blocks.
type AgentRelay struct {
	src       AgentSource
	render    func(ctx context.Context, n *store.RelayNote) ([]byte, error)
	log       *slog.Logger
	ctx       context.Context
	stop      context.CancelFunc
	heartbeat time.Duration
	buffer    int
	limits    AgentLimits
	start     sync.Once
	wake      chan struct{}

	mu           sync.Mutex
	up           bool
	closed       bool
	byConn       map[int64]map[*AgentStream]struct{}
	workspaces   map[int64]map[int64]struct{} // the connections held, by workspace
	total        int
	seq          uint64
	pendingNotes []int64
	recheck      map[int64]struct{} // workspaces whose connections may have been revoked
}

// AgentSource is what the relay reads from the database (a *store.Store).
type AgentSource interface {
	RelayNoteFor(ctx context.Context, noteID int64, connectionIDs []int64) (*store.RelayNote, []int64, error)
	LiveConnections(ctx context.Context, connectionIDs []int64) ([]int64, error)
}

// AgentLimits bound the agent streams: past PerConnection the oldest
// closes (a checkout runs one bridge per client session), past Total new
// ones are refused.
type AgentLimits struct {
	PerConnection, Total int
}

// DefaultAgentLimits fit a few client sessions per checkout, a few thousand agents per replica.
var DefaultAgentLimits = AgentLimits{PerConnection: 8, Total: 5000}

// AgentOptions are what NewAgentRelay needs; zero settings are the defaults.
type AgentOptions struct {
	Source    AgentSource
	Render    func(ctx context.Context, n *store.RelayNote) ([]byte, error) // Frame("note", id, data)
	Log       *slog.Logger
	Heartbeat time.Duration // also paces the check of each connection (20 s)
	Buffer    int           // events a stream may have waiting (64)
	Limits    AgentLimits
}

const closeRevoked = "revoked"

// AgentStream is one open agent event stream.
type AgentStream struct {
	connectionID, workspaceID int64
	seq                       uint64
	events                    chan Event
	done                      chan struct{}
	why                       string
}

// Events are the stream's events, in order.
func (st *AgentStream) Events() <-chan Event { return st.events }

// Done is closed when the relay drops the stream.
func (st *AgentStream) Done() <-chan struct{} { return st.done }

// Revoked reports, once Done is closed, whether its connection was revoked.
func (st *AgentStream) Revoked() bool { return st.why == closeRevoked }

// Replaced reports, once Done is closed, whether newer streams took its place.
func (st *AgentStream) Replaced() bool { return st.why == closeReplaced }

// NewAgentRelay returns a relay; it hears nothing until Hear.
func NewAgentRelay(o AgentOptions) *AgentRelay {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &AgentRelay{src: o.Source, render: o.Render, log: o.Log, ctx: ctx, stop: stop,
		heartbeat: o.Heartbeat, buffer: o.Buffer, limits: o.Limits, wake: make(chan struct{}, 1),
		byConn: map[int64]map[*AgentStream]struct{}{}, workspaces: map[int64]map[int64]struct{}{}, recheck: map[int64]struct{}{}}
	if r.heartbeat == 0 {
		r.heartbeat = defaultHeartbeat
	}
	if r.buffer == 0 {
		r.buffer = defaultBuffer
	}
	if r.limits.PerConnection == 0 {
		r.limits.PerConnection = DefaultAgentLimits.PerConnection
	}
	if r.limits.Total == 0 {
		r.limits.Total = DefaultAgentLimits.Total
	}
	return r
}

// Hear subscribes the relay to the listener's notes, its presence topic
// (which a revocation notifies) and its state.
func (r *AgentRelay) Hear(l *store.Listener) {
	store.Listen(l, store.NoteTopic, func(n store.NoteNotice) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.byConn) > 0 {
			r.pendingNotes = append(r.pendingNotes, n.NoteID)
			wake(r.wake)
		}
	})
	store.Listen(l, store.PresenceTopic, func(ws int64) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.workspaces[ws] != nil {
			r.recheck[ws] = struct{}{}
			wake(r.wake)
		}
	})
	l.Watch(func(up bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.up = up
		if !up {
			r.dropAll(closeDown)
		}
	})
}

// NewStream makes a stream for a connection of a workspace.
func (r *AgentRelay) NewStream(connectionID, workspaceID int64) *AgentStream {
	return &AgentStream{connectionID: connectionID, workspaceID: workspaceID, events: make(chan Event, r.buffer), done: make(chan struct{})}
}

// Subscribe registers a stream (ErrDown, ErrTooMany; see AgentLimits).
func (r *AgentRelay) Subscribe(st *AgentStream) error {
	r.start.Do(func() { go r.work() })
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.up || r.closed {
		return ErrDown
	}
	if r.total >= r.limits.Total {
		return ErrTooMany
	}
	r.seq++
	st.seq = r.seq
	r.total++
	set := r.byConn[st.connectionID]
	if set == nil {
		set = map[*AgentStream]struct{}{}
		r.byConn[st.connectionID] = set
	}
	set[st] = struct{}{}
	if r.workspaces[st.workspaceID] == nil {
		r.workspaces[st.workspaceID] = map[int64]struct{}{}
	}
	r.workspaces[st.workspaceID][st.connectionID] = struct{}{}
	for len(set) > r.limits.PerConnection {
		var oldest *AgentStream
		for o := range set {
			if oldest == nil || o.seq < oldest.seq {
				oldest = o
			}
		}
		r.drop(oldest, closeReplaced)
	}
	return nil
}

// Unsubscribe forgets a stream that ended on its own.
func (r *AgentRelay) Unsubscribe(st *AgentStream) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drop(st, "")
}

// Open counts the streams held now (the agent streams gauge).
func (r *AgentRelay) Open() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// Close ends every stream and stops the worker.
func (r *AgentRelay) Close() {
	r.mu.Lock()
	r.closed = true
	r.dropAll(closeShutdown)
	r.mu.Unlock()
	r.stop()
}

func (r *AgentRelay) send(st *AgentStream, ev Event) {
	select {
	case st.events <- ev:
	default:
		r.drop(st, closeOverflow)
	}
}

func (r *AgentRelay) drop(st *AgentStream, why string) {
	select {
	case <-st.done:
		return
	default:
	}
	st.why = why
	close(st.done)
	r.total--
	if set := r.byConn[st.connectionID]; set != nil {
		delete(set, st)
		if len(set) == 0 {
			delete(r.byConn, st.connectionID)
			if ws := r.workspaces[st.workspaceID]; ws != nil {
				delete(ws, st.connectionID)
				if len(ws) == 0 {
					delete(r.workspaces, st.workspaceID)
				}
			}
		}
	}
}

func (r *AgentRelay) dropAll(why string) {
	for _, set := range r.byConn {
		for st := range set {
			r.drop(st, why)
		}
	}
	r.pendingNotes = nil
}

func (r *AgentRelay) work() {
	beat := time.NewTicker(r.heartbeat)
	defer beat.Stop()
	for {
		all := false
		select {
		case <-r.ctx.Done():
			return
		case <-r.wake:
		case <-beat.C:
			all = true
		}
		r.mu.Lock()
		notes, recheck := r.pendingNotes, r.recheck
		r.pendingNotes, r.recheck = nil, map[int64]struct{}{}
		var check []int64
		for ws, conns := range r.workspaces {
			if _, ok := recheck[ws]; ok || all {
				check = slices.AppendSeq(check, maps.Keys(conns))
			}
		}
		r.mu.Unlock()
		for _, id := range notes {
			r.relayNote(id)
		}
		if len(check) > 0 {
			r.checkConnections(check)
		}
		if all {
			r.mu.Lock()
			for _, set := range r.byConn {
				for st := range set {
					r.send(st, Event{Data: Heartbeat})
				}
			}
			r.mu.Unlock()
		}
	}
}

func (r *AgentRelay) relayNote(noteID int64) {
	r.mu.Lock()
	conns := slices.Collect(maps.Keys(r.byConn))
	r.mu.Unlock()
	if len(conns) == 0 {
		return
	}
	n, to, err := r.src.RelayNoteFor(r.ctx, noteID, conns)
	if err != nil || len(to) == 0 {
		if err != nil && r.ctx.Err() == nil {
			r.log.Warn("live: loading a note for the agent streams failed; closing them", "note_id", noteID, "err", err)
			r.mu.Lock()
			r.dropAll(closeBehind)
			r.mu.Unlock()
		}
		return
	}
	ev, err := r.render(r.ctx, n)
	if err != nil {
		r.log.Error("live: render an agent's note", "note_id", noteID, "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range to {
		for st := range r.byConn[c] {
			r.send(st, Event{NoteID: noteID, Data: ev})
		}
	}
}

func (r *AgentRelay) checkConnections(conns []int64) {
	live, err := r.src.LiveConnections(r.ctx, conns)
	if err != nil {
		return // the database is away: check next time
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range conns {
		if !slices.Contains(live, c) {
			for st := range r.byConn[c] {
				r.drop(st, closeRevoked)
			}
		}
	}
}
