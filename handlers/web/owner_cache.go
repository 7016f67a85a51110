package web

import (
	"context"
	"sync"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// ownerCacheTTL is how long a signed-in owner is reused without a query.
const ownerCacheTTL = 30 * time.Second

// ownerCache remembers owners loaded for signed-in requests, briefly.
type ownerCache struct {
	mu   sync.Mutex
	m    map[int64]cachedOwner
	down bool
}

type cachedOwner struct {
	owner *store.Owner
	at    time.Time
}

// get returns the owner from the cache when fresh, else from the store.
func (oc *ownerCache) get(ctx context.Context, st *store.Store, id int64) (*store.Owner, error) {
	oc.mu.Lock()
	e, ok := oc.m[id]
	oc.mu.Unlock()
	if ok && time.Since(e.at) < ownerCacheTTL {
		return e.owner, nil
	}
	o, err := st.OwnerByID(ctx, id)
	if err != nil {
		return nil, err
	}
	oc.mu.Lock()
	if oc.m == nil || len(oc.m) > 10000 {
		oc.m = map[int64]cachedOwner{}
	}
	if !oc.down {
		oc.m[id] = cachedOwner{owner: o, at: time.Now()}
	}
	oc.mu.Unlock()
	return o, nil
}

// hear forgets a person changed on any replica; while the listener is down the
// cache keeps nothing.
func (oc *ownerCache) hear(l *store.Listener) {
	store.Listen(l, store.PersonTopic, oc.forget)
	l.Watch(func(up bool) {
		oc.mu.Lock()
		defer oc.mu.Unlock()
		oc.down = !up
		if !up {
			clear(oc.m)
		}
	})
}

// forget drops a cached person.
func (oc *ownerCache) forget(id int64) {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	delete(oc.m, id)
}
