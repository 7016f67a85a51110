package live

import "github.com/osfoundry/osfoundry/store"

// Stream is one open event stream.
type Stream struct {
	ownerID     int64
	workspaceID int64
	sessionID   int64 // 0 for an unread stream
	signIn      int64
	addr        string
	seq         uint64
	events      chan Event
	done        chan struct{} // closed when the broker drops the stream; why says why
	why         string
	presence    string // the sidebar version the page shows
	unread      []byte // the last unread event, never sent twice in a row
}

// Event is a framed event; NoteID lets a stream never send a note twice.
type Event struct {
	NoteID int64
	Data   []byte
}

// Events are the stream's events, in order.
func (st *Stream) Events() <-chan Event { return st.events }

// Done is closed when the broker drops the stream.
func (st *Stream) Done() <-chan struct{} { return st.done }

// SignedOut reports, once Done is closed, whether its sign-in ended.
func (st *Stream) SignedOut() bool { return st.why == closeSignOut }

// Replaced reports, once Done is closed, whether a newer stream took its
// place (Limits): the page polls rather than reconnect.
func (st *Stream) Replaced() bool { return st.why == closeReplaced }

// Client is the sign-in and address that open a stream.
type Client struct {
	SignIn int64
	Addr   string
}

// NewStream makes a stream for the owner; sessionID 0 makes an unread stream.
func (b *Broker) NewStream(o *store.Owner, sessionID int64, cl Client, presence string) *Stream {
	return &Stream{ownerID: o.ID, workspaceID: o.WorkspaceID, sessionID: sessionID, signIn: cl.SignIn, addr: cl.Addr, presence: presence,
		events: make(chan Event, b.buffer), done: make(chan struct{})}
}

// streamSets group streams by a key (a sign-in, an owner).
type streamSets map[int64]map[*Stream]struct{}

func (m streamSets) add(key int64, st *Stream) map[*Stream]struct{} {
	set := m[key]
	if set == nil {
		set = map[*Stream]struct{}{}
		m[key] = set
	}
	set[st] = struct{}{}
	return set
}

func (m streamSets) remove(key int64, st *Stream) {
	if set := m[key]; set != nil {
		delete(set, st)
		if len(set) == 0 {
			delete(m, key)
		}
	}
}

// Subscribe registers a stream, with its session's project and newest note
// (ErrDown, ErrTooMany; see Limits).
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
	if b.addrs[st.addr] >= b.limits.PerAddress {
		return ErrTooMany
	}
	b.seq++
	st.seq = b.seq
	b.addrs.add(st.addr)
	b.trim(b.signIns.add(st.signIn, st), b.limits.PerSignIn)
	b.trim(b.owners.add(st), b.limits.PerOwner)
	if st.sessionID == 0 {
		return nil
	}
	b.workspaces.remember(st.sessionID, st.workspaceID)
	t, first := b.sessions.add(st, projectID, latest)
	if first {
		// The sidebar may have changed since the page was drawn.
		b.work.presenceChanged(st.workspaceID)
	}
	if t.presenceEvent != nil && t.presence != st.presence {
		st.presence = t.presence
		b.send(st, Event{Data: t.presenceEvent})
	}
	return nil
}

// Unsubscribe forgets a stream that ended on its own (the client left).
func (b *Broker) Unsubscribe(st *Stream) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drop(st, "")
}

// send never blocks: a full buffer closes the stream.
func (b *Broker) send(st *Stream, ev Event) {
	select {
	case st.events <- ev:
	default:
		b.drop(st, closeOverflow)
	}
}

// drop removes a stream; why is "" when it left by itself.
func (b *Broker) drop(st *Stream, why string) {
	select {
	case <-st.done:
		return
	default:
	}
	st.why = why
	close(st.done)
	b.signIns.remove(st.signIn, st)
	b.owners.remove(st)
	b.addrs.remove(st.addr)
	if st.sessionID != 0 {
		b.sessions.remove(st)
	}
}

func (b *Broker) dropAll(why string) {
	for _, set := range b.signIns {
		for st := range set {
			b.drop(st, why)
		}
	}
	b.notes.clear()
}

// Open counts the streams held now (the live streams gauge).
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
		for _, set := range b.owners.streams {
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
