package live

// beat closes the streams whose owner may no longer see what they stream
// (one query per owner and session) and sends the others a heartbeat.
func (b *Broker) beat() {
	type key struct{ owner, workspace, session int64 }
	b.mu.Lock()
	keys := map[key][]*Stream{}
	for _, set := range b.signIns {
		for st := range set {
			k := key{st.ownerID, st.workspaceID, st.sessionID}
			keys[k] = append(keys[k], st)
		}
	}
	b.mu.Unlock()
	var gone []*Stream
	for k, streams := range keys {
		ok, err := b.src.OwnerSees(b.ctx, k.owner, k.workspace, k.session)
		if err != nil {
			// The database is away: keep the streams, check next time.
			continue
		}
		if !ok {
			gone = append(gone, streams...)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, st := range gone {
		b.drop(st, closeForbidden)
	}
	for _, set := range b.signIns {
		for st := range set {
			b.send(st, Event{Data: Heartbeat})
		}
	}
}
