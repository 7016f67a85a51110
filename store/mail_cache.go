package store

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// MailCache keeps, in memory, the newest note and receipt of each session this replica was asked
// about, so that a web poll can answer "nothing new" without a query. It vouches for a session only
// while the listener is connected and the session was loaded after LISTEN took effect.
type MailCache struct {
	store    *Store
	listener *Listener
	log      *slog.Logger

	mu      sync.RWMutex
	current bool
	// gen changes whenever the cache stops or starts vouching, so that a
	// load that started under another connection is not stored.
	gen        uint64
	entries    map[int64]cacheEntry
	stopSweep  context.CancelFunc
	sweepEvery time.Duration
}

type cacheEntry struct {
	workspaceID int64 // 0 until loaded from the database
	latest      int64
	// receipt is the newest receipt on the session's owners' notes as last loaded.
	receipt      int64
	receiptKnown bool
	receiptSeq   uint64
}

// SweepInterval is how often a connected mail cache re-reads the newest note of the sessions it
// follows.
const SweepInterval = 10 * time.Second

// NewMailCache returns a cache kept current by l; it starts vouching once l
// runs and connects.
func (s *Store) NewMailCache(l *Listener) *MailCache {
	c := &MailCache{store: s, listener: l, log: l.log, entries: map[int64]cacheEntry{}, sweepEvery: SweepInterval}
	Listen(l, NoteTopic, c.noteHeard)
	Listen(l, ReceiptTopic, c.receiptHeard)
	l.Watch(c.connected)
	return c
}

// MailCacheState is what the cache is doing, for metrics.
type MailCacheState struct {
	// Current is true while the listener is connected and the cache reloaded.
	Current bool
	// Sessions counts the sessions it follows (loaded by Follow, kept current).
	Sessions int
}

// State returns whether the cache is current and how many sessions it follows.
func (c *MailCache) State() MailCacheState {
	sessions := len(c.followedIDs())
	c.mu.RLock()
	defer c.mu.RUnlock()
	return MailCacheState{Current: c.current, Sessions: sessions}
}

// NewestNote returns the newest note id of a session of the workspace and true when the cache is
// sure of it.
func (c *MailCache) NewestNote(workspaceID, sessionID int64) (int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.entries[sessionID]
	if !c.current || !ok || e.workspaceID == 0 || e.workspaceID != workspaceID {
		return 0, false
	}
	return e.latest, true
}

// Follow loads a session's newest note id (and newest receipt, see
// MailMarks) from the database and, while the cache is current, keeps it
// current from then on. It returns the newest note id, or ErrNotFound when
// the session is not in the workspace.
func (c *MailCache) Follow(ctx context.Context, workspaceID, sessionID int64) (int64, error) {
	m, err := c.follow(ctx, workspaceID, sessionID)
	return m.Note, err
}

// MailMarks returns the newest note and receipt ids of a session of the workspace.
func (c *MailCache) MailMarks(ctx context.Context, workspaceID, sessionID int64) (MailMarks, error) {
	c.mu.RLock()
	e, ok := c.entries[sessionID]
	sure := c.current && ok && e.workspaceID != 0 && e.workspaceID == workspaceID && e.receiptKnown
	c.mu.RUnlock()
	if sure {
		return MailMarks{Note: e.latest, Receipt: e.receipt}, nil
	}
	return c.follow(ctx, workspaceID, sessionID)
}

func (c *MailCache) follow(ctx context.Context, workspaceID, sessionID int64) (MailMarks, error) {
	c.mu.RLock()
	gen, seq := c.gen, c.entries[sessionID].receiptSeq
	c.mu.RUnlock()
	ws, m, err := c.store.SessionMailMarks(ctx, sessionID)
	if err != nil {
		return MailMarks{}, err
	}
	if ws != workspaceID {
		return MailMarks{}, wrap("track session", pgx.ErrNoRows)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Loaded after LISTEN under the same connection: later notes will be announced.
	if c.current && c.gen == gen {
		e := c.entries[sessionID]
		e.workspaceID, e.latest = ws, max(e.latest, m.Note)
		if e.receiptSeq == seq {
			e.receipt, e.receiptKnown = max(e.receipt, m.Receipt), true
		}
		c.entries[sessionID] = e
	}
	return m, nil
}

func (c *MailCache) noteHeard(n NoteNotice) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[n.SessionID]
	if n.NoteID > e.latest {
		e.latest = n.NoteID
		c.entries[n.SessionID] = e
	}
}

func (c *MailCache) receiptHeard(r NoteRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[r.SessionID]; ok {
		e.receiptKnown = false
		e.receiptSeq++
		c.entries[r.SessionID] = e
	}
}

func (c *MailCache) connected(up bool) {
	c.mu.Lock()
	stop := c.stopSweep
	c.stopSweep = nil
	c.current = false
	c.gen++
	var ctx context.Context
	if up {
		ctx, c.stopSweep = context.WithCancel(Background(context.Background()))
	}
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	if !up {
		return
	}
	if err := c.reload(ctx); err != nil {
		c.log.Warn("note hub: reloading the followed sessions failed; the sweep tries again", "err", err)
	}
	go c.sweep(ctx)
}

func (c *MailCache) reload(ctx context.Context) error {
	c.mu.RLock()
	gen := c.gen
	c.mu.RUnlock()
	ids := c.followedIDs()
	fresh, err := newestNotes(ctx, c.store.pool, ids)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || ctx.Err() != nil {
		return nil
	}
	// A note heard since the load may be newer than it.
	for id, f := range fresh {
		f.latest = max(f.latest, c.entries[id].latest)
		fresh[id] = f
	}
	c.entries, c.current = fresh, true
	c.gen++
	c.log.Debug("note hub: sessions reloaded", "sessions", len(ids))
	return nil
}

func (c *MailCache) followedIDs() []int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ids := make([]int64, 0, len(c.entries))
	for id, e := range c.entries {
		if e.workspaceID != 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

func newestNotes(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, ids []int64) (map[int64]cacheEntry, error) {
	rows, err := q.Query(ctx, `
		SELECT s.id, s.workspace_id, coalesce((SELECT max(n.id) FROM notes n WHERE n.session_id = s.id), 0)
		FROM sessions s WHERE s.id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fresh := make(map[int64]cacheEntry, len(ids))
	for rows.Next() {
		var id int64
		var e cacheEntry
		if err := rows.Scan(&id, &e.workspaceID, &e.latest); err != nil {
			return nil, err
		}
		fresh[id] = e
	}
	return fresh, rows.Err()
}

// sweep re-reads the followed sessions' newest notes every sweepEvery and passes on a note whose
// notification never came.
func (c *MailCache) sweep(ctx context.Context) {
	t := time.NewTicker(c.sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.mu.RLock()
		current, gen := c.current, c.gen
		c.mu.RUnlock()
		if !current {
			if err := c.reload(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("note hub: reloading the followed sessions failed", "err", err)
			}
			continue
		}
		ids := c.followedIDs()
		if len(ids) == 0 {
			continue
		}
		fresh, err := newestNotes(ctx, c.store.pool, ids)
		if err != nil {
			if ctx.Err() == nil {
				c.log.Warn("note hub: sweep failed", "err", err)
			}
			continue
		}
		var found []NoteNotice
		c.mu.Lock()
		if c.gen != gen {
			c.mu.Unlock()
			continue
		}
		for id, f := range fresh {
			if e := c.entries[id]; e.workspaceID != 0 && f.latest > e.latest {
				e.latest = f.latest
				c.entries[id] = e
				found = append(found, NoteNotice{SessionID: id, NoteID: f.latest})
			}
		}
		c.mu.Unlock()
		for _, n := range found {
			// Usually a notification still on its way; it changes nothing when it comes.
			c.log.Debug("note hub: sweep found a newer note", "note", strconv.FormatInt(n.SessionID, 10)+":"+strconv.FormatInt(n.NoteID, 10))
			publish(c.listener, NoteTopic, n)
		}
	}
}
