package live

import "github.com/osfoundry/osfoundry/store"

// Stream is one open event stream.
type Stream struct {
	ownerID     int64
	workspaceID int64
	// sessionID is the session of a session stream, 0 for an unread stream.
	sessionID int64
	// signIn and addr are the sign-in and client address that opened it;
	// seq orders the streams by opening, so that the oldest is known.
	signIn int64
	addr   string
	seq    uint64
	events chan Event
	// done is closed when the broker drops the stream; why says why.
	done chan struct{}
	why  string
	// presence is the sidebar version the page shows (guarded by mu).
	presence string
	// unread is the unread event an unread stream has had (guarded by mu),
	// so that it never gets the same counts twice in a row.
	unread []byte
}

// Event is a framed event; NoteID is the note of a note event, so that a
// stream never sends a note twice.
type Event struct {
	NoteID int64
	Data   []byte
}

// Events are the stream's events, in order.
func (st *Stream) Events() <-chan Event { return st.events }

// Done is closed when the broker drops the stream.
func (st *Stream) Done() <-chan struct{} { return st.done }

// SignedOut reports, once Done is closed, whether the stream ended because
// its sign-in ended.
func (st *Stream) SignedOut() bool { return st.why == closeSignOut }

// Replaced reports, once Done is closed, whether the stream was closed to
// make room for a newer one of its sign-in or owner (Limits): the page
// should not reconnect, and polls instead.
func (st *Stream) Replaced() bool { return st.why == closeReplaced }

// Client is who opens a stream: the sign-in and the client's address.
type Client struct {
	SignIn int64
	Addr   string
}

// NewStream makes a stream for the owner; sessionID 0 makes an unread
// stream. presence is the sidebar version the page shows.
func (b *Broker) NewStream(o *store.Owner, sessionID int64, cl Client, presence string) *Stream {
	return &Stream{ownerID: o.ID, workspaceID: o.WorkspaceID, sessionID: sessionID, signIn: cl.SignIn, addr: cl.Addr, presence: presence,
		events: make(chan Event, b.buffer), done: make(chan struct{})}
}
