package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// The live streams of one replica. The note hub's one LISTEN connection
// (store.NoteHub) hears every notification, ids only; liveStreams, its
// listener, keeps the open streams of this replica in memory by session
// (the session page's stream) and by owner (the unread stream of the lists)
// and fans out:
//
//   - a note: loaded once per replica, rendered once per variant (the
//     sender's own row, everyone else's "new" row), framed once, sent to
//     every stream of the session;
//   - presence: a workspace's notification (or the periodic refresh, for
//     tiers that change with time) reloads each watched project's agents
//     once and sends the sidebar to the streams whose version differs;
//   - a receipt: the note's receipts line, rendered once;
//   - unread counts: one query per owner with an unread stream open;
//   - a sign-out: every stream of that cookie session ends.
//
// Sending never blocks: each stream has a bounded buffer, and a stream whose
// buffer is full is closed (the browser reconnects with Last-Event-ID and
// replays). While the hub is down, notifications are lost, so every stream
// is closed and new ones are refused until it listens again: browsers fall
// back to polling and reconnect, replaying what they missed. Nothing here
// holds a database connection between events.
type liveStreams struct {
	s   *Server
	ctx context.Context
	// stop cancels ctx: the streams end, the workers stop.
	stop context.CancelFunc
	// Settings, fixed before the first stream (tests shorten them).
	heartbeat     time.Duration
	presenceEvery time.Duration
	buffer        int
	start         sync.Once
	// wakeNotes and wakeUpkeep tell the two workers there is work pending.
	wakeNotes  chan struct{}
	wakeUpkeep chan struct{}

	mu     sync.Mutex
	up     bool // the hub is listening
	closed bool // shut down
	// sessions are the session streams by session id, owners the unread
	// streams by owner id, signIns every stream by sign-in id.
	sessions map[int64]*sessionTopic
	owners   map[int64]*ownerTopic
	signIns  map[string]map[*stream]struct{}
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
}

// Defaults of the live streams.
const (
	// streamHeartbeat is how often idle streams get a comment line, and
	// how often each stream's right to stay open is checked again.
	streamHeartbeat = 20 * time.Second
	// presenceRefresh is how often watched sidebars are recomputed for the
	// changes no notification announces: tiers that age, "updated N min ago".
	presenceRefresh = 10 * time.Second
	// streamBuffer is how many events a stream may have waiting; one more
	// and it is closed.
	streamBuffer = 64
	// maxReplay is how many missed notes a reconnecting stream replays; past
	// that, one reload event tells the page to load its list again.
	maxReplay = 100
)

// Why a stream was closed by the broker.
const (
	closeOverflow  = "overflow"
	closeHubDown   = "hub down"
	closeSignOut   = "sign-out"
	closeForbidden = "no longer allowed"
	closeShutdown  = "shutdown"
	closeBehind    = "behind"
)

// stream is one open event stream.
type stream struct {
	ownerID     int64
	workspaceID int64
	// sessionID is the session of a session stream, 0 for an unread stream.
	sessionID int64
	signIn    string
	events    chan streamEvent
	// done is closed when the broker drops the stream; why says why.
	done chan struct{}
	why  string
	// presence is the sidebar version the page shows (guarded by mu).
	presence string
	// unread is the unread event an unread stream has had (guarded by mu),
	// so that it never gets the same counts twice in a row.
	unread []byte
}

// streamEvent is a framed event; noteID is the note of a note event, so that
// a stream never sends a note twice.
type streamEvent struct {
	noteID int64
	data   []byte
}

type sessionTopic struct {
	workspaceID int64
	projectID   int64
	streams     map[*stream]struct{}
	// last is the newest note sent to the session's streams.
	last int64
	// presence and presenceEvent are the sidebar version last computed and its event.
	presence      string
	presenceEvent []byte
}

type ownerTopic struct {
	workspaceID int64
	streams     map[*stream]struct{}
}

func newLiveStreams(s *Server) *liveStreams {
	ctx, stop := context.WithCancel(context.Background())
	return &liveStreams{
		s: s, ctx: ctx, stop: stop,
		heartbeat: streamHeartbeat, presenceEvery: presenceRefresh, buffer: streamBuffer,
		wakeNotes: make(chan struct{}, 1), wakeUpkeep: make(chan struct{}, 1),
		sessions: map[int64]*sessionTopic{}, owners: map[int64]*ownerTopic{}, signIns: map[string]map[*stream]struct{}{},
		pendingNotes: map[int64]struct{}{}, pendingReceipts: map[int64]map[int64]struct{}{},
		dirtyPresence: map[int64]struct{}{}, dirtyUnread: map[int64]struct{}{}, unreadSessions: map[int64]struct{}{},
		sessionWorkspace: map[int64]int64{},
	}
}

// errLiveDown refuses a stream while the hub is down or the server stops:
// the page polls and its stream retries.
var errLiveDown = echo.NewHTTPError(http.StatusServiceUnavailable, "Live updates are unavailable for a moment; the page checks for new notes every few seconds instead.")

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// HubLive implements store.HubListener: down, every stream is closed.
func (l *liveStreams) HubLive(up bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.up = up
	if !up {
		l.dropAll(closeHubDown)
	}
}

// HubNotify implements store.HubListener: it records the work and wakes a
// worker, never blocking the hub.
func (l *liveStreams) HubNotify(channel, payload string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch channel {
	case store.NotesChannel:
		sid, _, ok := store.ParseIDPair(payload)
		if !ok {
			return
		}
		if _, watched := l.sessions[sid]; watched {
			l.pendingNotes[sid] = struct{}{}
			wake(l.wakeNotes)
		}
		if len(l.owners) > 0 {
			l.unreadSessions[sid] = struct{}{}
			wake(l.wakeUpkeep)
		}
	case store.ReceiptsChannel:
		sid, nid, ok := store.ParseIDPair(payload)
		if _, watched := l.sessions[sid]; !ok || !watched {
			return
		}
		if l.pendingReceipts[sid] == nil {
			l.pendingReceipts[sid] = map[int64]struct{}{}
		}
		l.pendingReceipts[sid][nid] = struct{}{}
		wake(l.wakeNotes)
	case store.PresenceChannel:
		if ws, err := strconv.ParseInt(payload, 10, 64); err == nil {
			l.dirtyPresence[ws] = struct{}{}
			wake(l.wakeUpkeep)
		}
	case store.ReadsChannel:
		if owner, err := strconv.ParseInt(payload, 10, 64); err == nil && l.owners[owner] != nil {
			l.dirtyUnread[owner] = struct{}{}
			wake(l.wakeUpkeep)
		}
	case store.SignOutChannel:
		for st := range l.signIns[payload] {
			l.drop(st, closeSignOut)
		}
	}
}

// close ends every stream and stops the workers: the server is shutting
// down, and its drain must not wait for streams.
func (l *liveStreams) close() {
	l.mu.Lock()
	l.closed = true
	l.dropAll(closeShutdown)
	l.mu.Unlock()
	l.stop()
}

// newStream makes a stream for the owner; sessionID 0 makes an unread stream.
func (l *liveStreams) newStream(o *store.Owner, sessionID int64, signIn, presence string) *stream {
	return &stream{ownerID: o.ID, workspaceID: o.WorkspaceID, sessionID: sessionID, signIn: signIn, presence: presence,
		events: make(chan streamEvent, l.buffer), done: make(chan struct{})}
}

// subscribe registers a stream; a session stream names its session's
// project and newest note. It fails while the hub is down or the server stops.
func (l *liveStreams) subscribe(st *stream, projectID, latest int64) error {
	l.start.Do(func() {
		go l.sendNotes()
		go l.upkeep()
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.up || l.closed {
		return errLiveDown
	}
	if l.signIns[st.signIn] == nil {
		l.signIns[st.signIn] = map[*stream]struct{}{}
	}
	l.signIns[st.signIn][st] = struct{}{}
	if st.sessionID == 0 {
		t := l.owners[st.ownerID]
		if t == nil {
			t = &ownerTopic{workspaceID: st.workspaceID, streams: map[*stream]struct{}{}}
			l.owners[st.ownerID] = t
		}
		t.streams[st] = struct{}{}
		return nil
	}
	l.sessionWorkspace[st.sessionID] = st.workspaceID
	t := l.sessions[st.sessionID]
	if t == nil {
		t = &sessionTopic{workspaceID: st.workspaceID, projectID: projectID, streams: map[*stream]struct{}{}, last: latest}
		l.sessions[st.sessionID] = t
		// A first look at the sidebar, in case it changed since the page was drawn.
		l.dirtyPresence[st.workspaceID] = struct{}{}
		wake(l.wakeUpkeep)
	}
	t.streams[st] = struct{}{}
	if t.presenceEvent != nil && t.presence != st.presence {
		st.presence = t.presence
		l.send(st, streamEvent{data: t.presenceEvent})
	}
	return nil
}

// unsubscribe forgets a stream that ended on its own (the client left).
func (l *liveStreams) unsubscribe(st *stream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.drop(st, "")
}

// send queues an event without blocking; a full buffer closes the stream.
// l.mu is held.
func (l *liveStreams) send(st *stream, ev streamEvent) {
	select {
	case st.events <- ev:
	default:
		l.drop(st, closeOverflow)
	}
}

// drop removes a stream and, unless it left by itself (why ""), closes it
// with a reason. l.mu is held.
func (l *liveStreams) drop(st *stream, why string) {
	select {
	case <-st.done:
		return
	default:
	}
	st.why = why
	close(st.done)
	if set := l.signIns[st.signIn]; set != nil {
		delete(set, st)
		if len(set) == 0 {
			delete(l.signIns, st.signIn)
		}
	}
	if st.sessionID == 0 {
		if t := l.owners[st.ownerID]; t != nil {
			delete(t.streams, st)
			if len(t.streams) == 0 {
				delete(l.owners, st.ownerID)
			}
		}
		return
	}
	if t := l.sessions[st.sessionID]; t != nil {
		delete(t.streams, st)
		if len(t.streams) == 0 {
			delete(l.sessions, st.sessionID)
		}
	}
}

// dropAll closes every stream and forgets pending work. l.mu is held.
func (l *liveStreams) dropAll(why string) {
	for _, set := range l.signIns {
		for st := range set {
			l.drop(st, why)
		}
	}
	clear(l.pendingNotes)
	clear(l.pendingReceipts)
}

// sendNotes is the worker that loads and sends new notes and receipts, in
// the order of their ids within each session.
func (l *liveStreams) sendNotes() {
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-l.wakeNotes:
		}
		l.mu.Lock()
		notes, receipts := l.pendingNotes, l.pendingReceipts
		l.pendingNotes, l.pendingReceipts = map[int64]struct{}{}, map[int64]map[int64]struct{}{}
		l.mu.Unlock()
		for sid := range notes {
			l.sendSessionNotes(sid)
		}
		for sid, ids := range receipts {
			for nid := range ids {
				l.sendReceipt(sid, nid)
			}
		}
	}
}

// sendSessionNotes loads the session's notes newer than what its streams
// have had, once, and sends each to every stream of the session. Whichever
// note's notification woke it (they may arrive out of order: each is sent
// after its note's commit), a session's notes commit in id order, so the
// notes after the newest sent are exactly those new.
func (l *liveStreams) sendSessionNotes(sessionID int64) {
	l.mu.Lock()
	t := l.sessions[sessionID]
	if t == nil {
		l.mu.Unlock()
		return
	}
	ws, after := t.workspaceID, t.last
	l.mu.Unlock()
	notes, err := l.s.store.SessionMailAfter(l.ctx, ws, sessionID, after)
	if err != nil || len(notes) > maxReplay {
		// The streams reconnect and replay from the database.
		if err != nil && l.ctx.Err() == nil {
			l.s.log.Warn("live: loading new notes failed; closing the session's streams", "session_id", sessionID, "err", err)
		}
		l.dropSession(sessionID, closeBehind)
		return
	}
	now := time.Now()
	for i := len(notes) - 1; i >= 0; i-- {
		n := notes[i]
		// Every variant of the row there is, rendered once: the sender's
		// own row, and the "new" row everyone else gets.
		other, err := l.noteEvent(now, sessionID, n, false)
		if err != nil {
			l.s.log.Error("live: render note", "note_id", n.ID, "err", err)
			l.dropSession(sessionID, closeBehind)
			return
		}
		own := other
		if n.SenderOwnerID != nil {
			if own, err = l.noteEvent(now, sessionID, n, true); err != nil {
				l.s.log.Error("live: render note", "note_id", n.ID, "err", err)
				l.dropSession(sessionID, closeBehind)
				return
			}
		}
		l.mu.Lock()
		if t := l.sessions[sessionID]; t != nil && n.ID > t.last {
			t.last = n.ID
			for st := range t.streams {
				ev := other
				if n.SentBy(st.ownerID) {
					ev = own
				}
				l.send(st, streamEvent{noteID: n.ID, data: ev})
			}
		}
		l.mu.Unlock()
	}
}

func (l *liveStreams) dropSession(sessionID int64, why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.sessions[sessionID]; t != nil {
		for st := range t.streams {
			l.drop(st, why)
		}
	}
}

// noteEvent renders a note's row as the live note event, for its sender
// (own) or for the other owners, to whom it is new.
func (l *liveStreams) noteEvent(now time.Time, sessionID int64, n store.Note, own bool) ([]byte, error) {
	html, err := renderFragment(now, views.MailRows(sessionID, []views.MailRow{{Note: n, Unread: !own}}))
	if err != nil {
		return nil, err
	}
	return sseEvent("note", n.ID, html), nil
}

// sendReceipt sends a note's receipts line to the session's streams.
func (l *liveStreams) sendReceipt(sessionID, noteID int64) {
	l.mu.Lock()
	t := l.sessions[sessionID]
	if t == nil {
		l.mu.Unlock()
		return
	}
	ws := t.workspaceID
	l.mu.Unlock()
	line, err := l.s.receiptsLine(l.ctx, ws, sessionID, noteID)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err != nil {
		l.s.log.Warn("live: load receipts", "note_id", noteID, "err", err)
		return
	}
	html, err := renderFragment(time.Now(), views.NoteReceipts(noteID, true, line))
	if err != nil {
		l.s.log.Error("live: render receipts", "note_id", noteID, "err", err)
		return
	}
	ev := sseEvent("receipt", 0, html)
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.sessions[sessionID]; t != nil {
		for st := range t.streams {
			l.send(st, streamEvent{data: ev})
		}
	}
}

// renderFragment renders a component outside any request, as of now.
func renderFragment(now time.Time, c templ.Component) ([]byte, error) {
	var buf bytes.Buffer
	err := c.Render(views.WithPage(context.Background(), &views.Page{Now: now}), &buf)
	return buf.Bytes(), err
}

// upkeep is the worker for everything but notes: presence, unread counts,
// heartbeats and the re-check of each stream's right to stay open.
func (l *liveStreams) upkeep() {
	refresh := time.NewTicker(l.presenceEvery)
	defer refresh.Stop()
	beat := time.NewTicker(l.heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-l.wakeUpkeep:
		case <-refresh.C:
			l.mu.Lock()
			for _, t := range l.sessions {
				l.dirtyPresence[t.workspaceID] = struct{}{}
			}
			l.mu.Unlock()
		case <-beat.C:
			l.beat()
		}
		l.mu.Lock()
		presence, unread, sessions := l.dirtyPresence, l.dirtyUnread, l.unreadSessions
		l.dirtyPresence, l.dirtyUnread, l.unreadSessions = map[int64]struct{}{}, map[int64]struct{}{}, map[int64]struct{}{}
		l.mu.Unlock()
		for ws := range l.workspacesOf(sessions) {
			l.mu.Lock()
			for owner, t := range l.owners {
				if t.workspaceID == ws {
					unread[owner] = struct{}{}
				}
			}
			l.mu.Unlock()
		}
		for ws := range presence {
			l.refreshPresence(ws)
		}
		for owner := range unread {
			l.refreshUnread(owner)
		}
	}
}

// workspacesOf returns the workspaces of sessions, from memory or, once per
// session, from the database.
func (l *liveStreams) workspacesOf(sessions map[int64]struct{}) map[int64]struct{} {
	out := map[int64]struct{}{}
	for sid := range sessions {
		l.mu.Lock()
		ws, ok := l.sessionWorkspace[sid]
		l.mu.Unlock()
		if !ok {
			var err error
			if ws, _, err = l.s.store.SessionMailMarks(l.ctx, sid); err != nil {
				continue
			}
			l.mu.Lock()
			if len(l.sessionWorkspace) > 100_000 {
				clear(l.sessionWorkspace)
			}
			l.sessionWorkspace[sid] = ws
			l.mu.Unlock()
		}
		out[ws] = struct{}{}
	}
	return out
}

// refreshPresence recomputes the sidebar of every watched session of the
// workspace (one load per project) and sends it where it changed.
func (l *liveStreams) refreshPresence(ws int64) {
	l.mu.Lock()
	projects := map[int64][]int64{}
	for sid, t := range l.sessions {
		if t.workspaceID == ws {
			projects[t.projectID] = append(projects[t.projectID], sid)
		}
	}
	l.mu.Unlock()
	for pid, sessions := range projects {
		p, err := l.s.store.GetProject(l.ctx, ws, pid)
		if err != nil {
			continue
		}
		agents, err := l.s.store.ListSeatedAgents(l.ctx, ws, pid)
		if err != nil {
			if l.ctx.Err() == nil {
				l.s.log.Warn("live: load presence", "project_id", pid, "err", err)
			}
			continue
		}
		now := time.Now()
		for _, sid := range sessions {
			v := presenceOf(now, sid, *p, agents)
			l.mu.Lock()
			t := l.sessions[sid]
			same := t == nil || t.presence == v.Version
			l.mu.Unlock()
			if same {
				continue
			}
			html, err := renderFragment(now, views.PresenceSidebar(v))
			if err != nil {
				l.s.log.Error("live: render presence", "session_id", sid, "err", err)
				continue
			}
			ev := sseEvent("presence", 0, html)
			l.mu.Lock()
			if t := l.sessions[sid]; t != nil {
				t.presence, t.presenceEvent = v.Version, ev
				for st := range t.streams {
					if st.presence != v.Version {
						st.presence = v.Version
						l.send(st, streamEvent{data: ev})
					}
				}
			}
			l.mu.Unlock()
		}
	}
}

// unreadCounts is the data of the unread event: the owner's unread notes in
// all, per project and per session (those with any), ids as keys.
type unreadCounts struct {
	Total    int            `json:"total"`
	Projects map[string]int `json:"projects"`
	Sessions map[string]int `json:"sessions"`
}

// unreadEvent loads the owner's unread counts as the unread event.
func (s *Server) unreadEvent(ctx context.Context, workspaceID, ownerID int64) ([]byte, error) {
	rows, err := s.store.UnreadMail(ctx, workspaceID, ownerID)
	if err != nil {
		return nil, err
	}
	u := unreadCounts{Projects: map[string]int{}, Sessions: map[string]int{}}
	for _, r := range rows {
		u.Total += r.Unread
		u.Projects[strconv.FormatInt(r.ProjectID, 10)] += r.Unread
		u.Sessions[strconv.FormatInt(r.SessionID, 10)] = r.Unread
	}
	b, err := json.Marshal(u)
	if err != nil {
		return nil, err
	}
	return sseEvent("unread", 0, b), nil
}

// refreshUnread recounts an owner's unread notes and sends the counts to
// their unread streams when they changed.
func (l *liveStreams) refreshUnread(owner int64) {
	l.mu.Lock()
	t := l.owners[owner]
	if t == nil {
		l.mu.Unlock()
		return
	}
	ws := t.workspaceID
	l.mu.Unlock()
	ev, err := l.s.unreadEvent(l.ctx, ws, owner)
	if err != nil {
		if l.ctx.Err() == nil {
			l.s.log.Warn("live: count unread", "owner_id", owner, "err", err)
		}
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.owners[owner]; t != nil {
		for st := range t.streams {
			if !bytes.Equal(st.unread, ev) {
				st.unread = ev
				l.send(st, streamEvent{data: ev})
			}
		}
	}
}

// firstUnread queues a new unread stream's first event, unless a recount
// since it subscribed already queued it one (as new or newer).
func (l *liveStreams) firstUnread(st *stream, ev []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st.unread == nil {
		st.unread = ev
		l.send(st, streamEvent{data: ev})
	}
}

// beat checks that every stream's owner may still see what it streams (one
// query per owner and session, however many streams), closes those that may
// not, and sends every other a heartbeat.
func (l *liveStreams) beat() {
	type key struct{ owner, workspace, session int64 }
	l.mu.Lock()
	keys := map[key][]*stream{}
	for _, set := range l.signIns {
		for st := range set {
			k := key{st.ownerID, st.workspaceID, st.sessionID}
			keys[k] = append(keys[k], st)
		}
	}
	l.mu.Unlock()
	var gone []*stream
	for k, streams := range keys {
		ok, err := l.s.store.OwnerSees(l.ctx, k.owner, k.workspace, k.session)
		if err != nil {
			// The database is away: keep the streams, check next time.
			continue
		}
		if !ok {
			gone = append(gone, streams...)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, st := range gone {
		l.drop(st, closeForbidden)
	}
	for _, set := range l.signIns {
		for st := range set {
			l.send(st, streamEvent{data: heartbeat})
		}
	}
}

// open counts the streams held now, for the live streams gauge of the
// metrics (read at each scrape).
func (l *liveStreams) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, set := range l.signIns {
		n += len(set)
	}
	return n
}
