package web

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// signInCacheTTL only bounds what a lost notification could keep: an end is
// heard at once through the listener.
const signInCacheTTL = 30 * time.Second

// signInCache keeps recent sign-ins by their token's hash. While the listener is
// down, other replicas' sign-outs go unheard, so it keeps nothing.
type signInCache struct {
	mu sync.Mutex
	up bool
	m  map[[32]byte]cachedSignIn
	// ended counts forgets, so that a read that raced with one is not cached.
	ended uint64
}

type cachedSignIn struct {
	si *store.SignIn
	at time.Time
}

// hear follows sign-outs on any replica, and whether they can be heard at all.
func (sc *signInCache) hear(l *store.Listener) {
	store.Listen(l, store.SignOutTopic, sc.forget)
	l.Watch(func(up bool) {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		sc.up = up
		if !up {
			clear(sc.m)
			sc.ended++
		}
	})
}

// forget drops an ended sign-in.
func (sc *signInCache) forget(id int64) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.ended++
	for k, e := range sc.m {
		if e.si.ID == id {
			delete(sc.m, k)
		}
	}
}

// forgetOthers drops every sign-in of the owner but keep.
func (sc *signInCache) forgetOthers(ownerID, keep int64) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.ended++
	for k, e := range sc.m {
		if e.si.OwnerID == ownerID && e.si.ID != keep {
			delete(sc.m, k)
		}
	}
}

// get returns the live sign-in of token (store.ErrNotFound when ended).
func (sc *signInCache) get(ctx context.Context, st *store.Store, token string) (*store.SignIn, error) {
	key := sha256.Sum256([]byte(token))
	now := time.Now()
	sc.mu.Lock()
	e, ok := sc.m[key]
	up, ended := sc.up, sc.ended
	sc.mu.Unlock()
	if ok && up && now.Sub(e.at) < signInCacheTTL && now.Before(e.si.EndsAt()) {
		return e.si, nil
	}
	si, err := st.SignInByToken(ctx, token)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if err != nil {
		delete(sc.m, key)
		return nil, err
	}
	if sc.up && sc.ended == ended {
		if sc.m == nil || len(sc.m) > 10000 {
			sc.m = map[[32]byte]cachedSignIn{}
		}
		sc.m[key] = cachedSignIn{si: si, at: now}
	}
	return si, nil
}
