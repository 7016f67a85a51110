package live

import "time"

// upkeep is the worker for everything but notes: presence, unread counts,
// heartbeats and the re-check of each stream's right to stay open.
func (b *Broker) upkeep() {
	refresh := time.NewTicker(b.presenceEvery)
	defer refresh.Stop()
	beat := time.NewTicker(b.heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-b.wakeUpkeep:
		case <-refresh.C:
			b.mu.Lock()
			for _, t := range b.sessions {
				b.dirtyPresence[t.workspaceID] = struct{}{}
			}
			b.mu.Unlock()
		case <-beat.C:
			b.beat()
		}
		b.mu.Lock()
		presence, unread, sessions := b.dirtyPresence, b.dirtyUnread, b.unreadSessions
		b.dirtyPresence, b.dirtyUnread, b.unreadSessions = map[int64]struct{}{}, map[int64]struct{}{}, map[int64]struct{}{}
		b.mu.Unlock()
		for ws := range presence {
			b.refreshPresence(ws)
		}
		for owner := range unread {
			b.refreshUnread(owner)
		}
		for ws, sids := range b.workspacesOf(sessions) {
			var owners []int64
			b.mu.Lock()
			for owner := range b.byOwner {
				if _, done := unread[owner]; !done {
					if w, _ := b.ownerWorkspace(owner); w == ws {
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

// workspacesOf returns sessions by their workspace, the workspace from
// memory or, once per session, from the database.
func (b *Broker) workspacesOf(sessions map[int64]struct{}) map[int64][]int64 {
	out := map[int64][]int64{}
	for sid := range sessions {
		b.mu.Lock()
		ws, ok := b.sessionWorkspace[sid]
		b.mu.Unlock()
		if !ok {
			var err error
			if ws, _, err = b.src.SessionMailMarks(b.ctx, sid); err != nil {
				continue
			}
			b.mu.Lock()
			if len(b.sessionWorkspace) > 100_000 {
				clear(b.sessionWorkspace)
			}
			b.sessionWorkspace[sid] = ws
			b.mu.Unlock()
		}
		out[ws] = append(out[ws], sid)
	}
	return out
}
