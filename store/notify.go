package store

import (
	"context"
	"log/slog"
	"sync"
)

type notification struct{ channel, payload string }

// notifyAfterCommit queues a committed write's notifications and returns at once. PostgreSQL
// serialises notifying commits behind one lock held through the WAL flush, so they go out later in
// batches, with synchronous_commit off (docs/performance.md).
func (s *Store) notifyAfterCommit(ns ...notification) {
	if len(ns) == 0 {
		return
	}
	q := &s.notifications
	q.mu.Lock()
	q.queue = append(q.queue, ns...)
	start := !q.running
	q.running = true
	if start {
		q.senders.Add(1)
	}
	q.mu.Unlock()
	if start {
		go s.sendQueued()
	}
}

type notifyQueue struct {
	mu      sync.Mutex
	queue   []notification
	running bool
	senders sync.WaitGroup
}

const maxNotifyBatch = 1000

func (s *Store) sendQueued() {
	q := &s.notifications
	defer q.senders.Done()
	ctx := Background(context.Background())
	for {
		q.mu.Lock()
		batch := q.queue
		if len(batch) > maxNotifyBatch {
			batch = batch[:maxNotifyBatch:maxNotifyBatch]
		}
		q.queue = q.queue[len(batch):]
		if len(batch) == 0 {
			q.queue, q.running = nil, false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		channels, payloads := make([]string, 0, len(batch)), make([]string, 0, len(batch))
		seen := make(map[notification]bool, len(batch))
		for _, n := range batch {
			if !seen[n] { // PostgreSQL would fold repeats within a transaction anyway
				seen[n] = true
				channels, payloads = append(channels, n.channel), append(payloads, n.payload)
			}
		}
		if _, err := s.pool.Exec(ctx, `
			SELECT set_config('synchronous_commit', 'off', true), pg_notify(c, p)
			FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS n(c, p, i) ORDER BY i`, channels, payloads); err != nil {
			slog.Default().Warn("store: notifications after commit failed; the note hubs' sweep will catch up",
				"notifications", len(channels), "err", err)
		}
	}
}
