package live

import "errors"

// Limits bound the streams held at once, so that one cookie or one address
// cannot take the server's connections and memory: a sign-in or an owner
// past its limit has its oldest stream closed (the page behind it polls),
// an address past its limit is refused new ones. A zero field is its
// default.
type Limits struct {
	PerSignIn, PerOwner, PerAddress int
}

// DefaultLimits: a browser with many tabs, an owner with a few devices, an
// office behind one address.
var DefaultLimits = Limits{PerSignIn: 8, PerOwner: 16, PerAddress: 64}

// ErrTooMany refuses a stream from a client address that holds as many as
// Limits.PerAddress allows.
var ErrTooMany = errors.New("live: too many streams from this address")

func (l Limits) orDefault() Limits {
	if l.PerSignIn == 0 {
		l.PerSignIn = DefaultLimits.PerSignIn
	}
	if l.PerOwner == 0 {
		l.PerOwner = DefaultLimits.PerOwner
	}
	if l.PerAddress == 0 {
		l.PerAddress = DefaultLimits.PerAddress
	}
	return l
}

// addressCounts are how many streams each client address holds.
type addressCounts map[string]int

func (a addressCounts) add(addr string) { a[addr]++ }

func (a addressCounts) remove(addr string) {
	if a[addr]--; a[addr] <= 0 {
		delete(a, addr)
	}
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
