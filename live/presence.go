package live

import "time"

// refreshPresence recomputes the workspace's watched sidebars (one load per
// project) and sends them where they changed.
func (b *Broker) refreshPresence(ws int64) {
	b.mu.Lock()
	projects := b.sessions.byProject(ws)
	b.mu.Unlock()
	for pid, sessions := range projects {
		p, err := b.src.GetProject(b.ctx, ws, pid)
		if err != nil {
			continue
		}
		agents, err := b.src.ListSeatedAgents(b.ctx, ws, pid)
		if err != nil {
			if b.ctx.Err() == nil {
				b.log.Warn("live: load presence", "project_id", pid, "err", err)
			}
			continue
		}
		now := time.Now()
		for _, sid := range sessions {
			v := b.render.Presence(now, sid, *p, agents)
			b.mu.Lock()
			t := b.sessions[sid]
			same := t == nil || t.presence == v.Version
			b.mu.Unlock()
			if same {
				continue
			}
			html, err := v.HTML()
			if err != nil {
				b.log.Error("live: render presence", "session_id", sid, "err", err)
				continue
			}
			ev := Frame("presence", 0, html)
			b.mu.Lock()
			if t := b.sessions[sid]; t != nil {
				t.presence, t.presenceEvent = v.Version, ev
				for st := range t.streams {
					if st.presence != v.Version {
						st.presence = v.Version
						b.send(st, Event{Data: ev})
					}
				}
			}
			b.mu.Unlock()
		}
	}
}
