package live

import (
	"sync"
	"time"
)

// upkeepQueue holds the workspaces whose presence may have changed, the
// owners whose read marks moved and the sessions with new notes.
type upkeepQueue struct {
	mu       sync.Mutex
	wake     chan struct{}
	presence map[int64]struct{}
	owners   map[int64]struct{}
	sessions map[int64]struct{}
}

func newUpkeepQueue() *upkeepQueue {
	return &upkeepQueue{wake: make(chan struct{}, 1), presence: map[int64]struct{}{}, owners: map[int64]struct{}{}, sessions: map[int64]struct{}{}}
}

func (q *upkeepQueue) presenceChanged(workspaceID int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.presence[workspaceID] = struct{}{}
	wake(q.wake)
}

func (q *upkeepQueue) readsMoved(ownerID int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.owners[ownerID] = struct{}{}
	wake(q.wake)
}

func (q *upkeepQueue) notesArrived(sessionID int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sessions[sessionID] = struct{}{}
	wake(q.wake)
}

// presenceDue queues every watched workspace without waking the worker, which is awake.
func (q *upkeepQueue) presenceDue(sessions sessionTopics) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, t := range sessions {
		q.presence[t.workspaceID] = struct{}{}
	}
}

func (q *upkeepQueue) take() (presence, owners, sessions map[int64]struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	presence, owners, sessions = q.presence, q.owners, q.sessions
	q.presence, q.owners, q.sessions = map[int64]struct{}{}, map[int64]struct{}{}, map[int64]struct{}{}
	return presence, owners, sessions
}

// upkeep is the worker for everything but notes.
func (b *Broker) upkeep() {
	refresh := time.NewTicker(b.presenceEvery)
	defer refresh.Stop()
	beat := time.NewTicker(b.heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-b.work.wake:
		case <-refresh.C:
			b.mu.Lock()
			b.work.presenceDue(b.sessions)
			b.mu.Unlock()
		case <-beat.C:
			b.beat()
		}
		presence, unread, sessions := b.work.take()
		for ws := range presence {
			b.refreshPresence(ws)
		}
		for owner := range unread {
			b.refreshUnread(owner)
		}
		for ws, sids := range b.workspacesOf(sessions) {
			var owners []int64
			b.mu.Lock()
			for owner := range b.owners.streams {
				if _, done := unread[owner]; !done {
					if w, _ := b.owners.workspace(owner); w == ws {
						owners = append(owners, owner)
					}
				}
			}
			b.mu.Unlock()
			if len(owners) > 0 {
				b.recountUnread(owners, sids)
			}
		}
	}
}

// sessionWorkspaces caches each session's workspace, which never changes.
type sessionWorkspaces struct {
	mu sync.Mutex
	m  map[int64]int64
}

func (c *sessionWorkspaces) get(sessionID int64) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ws, ok := c.m[sessionID]
	return ws, ok
}

func (c *sessionWorkspaces) remember(sessionID, workspaceID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 100_000 {
		clear(c.m)
	}
	c.m[sessionID] = workspaceID
}

// workspacesOf groups sessions by workspace, each looked up once.
func (b *Broker) workspacesOf(sessions map[int64]struct{}) map[int64][]int64 {
	out := map[int64][]int64{}
	for sid := range sessions {
		ws, ok := b.workspaces.get(sid)
		if !ok {
			var err error
			if ws, _, err = b.src.SessionMailMarks(b.ctx, sid); err != nil {
				continue
			}
			b.workspaces.remember(sid, ws)
		}
		out[ws] = append(out[ws], sid)
	}
	return out
}
