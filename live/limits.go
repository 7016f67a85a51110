package live

import "errors"

// Limits bound the streams one sign-in, owner or address holds, so that one
// cookie cannot take the server's connections: past PerSignIn or PerOwner
// the oldest stream closes, past PerAddress new ones are refused.
type Limits struct {
	PerSignIn, PerOwner, PerAddress int
}

// DefaultLimits fit a browser with many tabs, an owner with a few devices, an office behind one address.
var DefaultLimits = Limits{PerSignIn: 8, PerOwner: 16, PerAddress: 64}

// ErrTooMany refuses a stream from an address that holds Limits.PerAddress.
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

type addressCounts map[string]int

func (a addressCounts) add(addr string) { a[addr]++ }

func (a addressCounts) remove(addr string) {
	if a[addr]--; a[addr] <= 0 {
		delete(a, addr)
	}
}

// trim closes the oldest streams of set until it holds at most limit.
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
