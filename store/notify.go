package store

import (
	"context"
	"log/slog"
	"sync"
)

// Sending notifications. A write that others must hear of queues its
// notifications with notifyAfterCommit once it has committed; that is the one
// way Go code sends a NOTIFY.
//
// A pg_notify inside a write's own statement or transaction is allowed only
// where the write is rare or notifies rarely, and the notification depends on
// what that statement decides: a profile claimed, a connection revoked, a
// webhook endpoint enabled or sent a test, a read mark that moved, a receipt
// recorded for the first time. PostgreSQL serialises the commits of every
// notifying transaction of a database behind one lock held through the WAL
// flush, so a notification in the transaction of a frequent write (a note, a
// status) caps every writer of the database (docs/performance.md). Those
// statements build the payload of the channel's Topic (topics.go).

// notification is one NOTIFY to send: a channel and its payload.
type notification struct{ channel, payload string }

// notifyAfterCommit queues the notifications of a write that has committed
// and returns at once: the write's caller does not wait for them. They go
// out in order, as one statement per batch, from a sender that runs while
// any are queued (sendQueued), in a transaction of their own whose commit
// does not wait for the WAL flush (synchronous_commit off: they are
// wake-ups, not data); the lock PostgreSQL takes for notifying commits is
// then held for an in-memory commit, once for all the writes that committed
// meanwhile.
//
// A notification that is lost (the statement failed, or the process died
// first) is made up for by the mail caches' sweep (SweepInterval), the live
// pages' periodic presence refresh and the webhook senders' own sweep.
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

// notifyQueue holds the notifications notifyAfterCommit queued and whether
// a sender is sending them.
type notifyQueue struct {
	mu      sync.Mutex
	queue   []notification
	running bool
	senders sync.WaitGroup
}

// maxNotifyBatch bounds the notifications of one statement.
const maxNotifyBatch = 1000

// sendQueued sends what notifyAfterCommit queued, a batch per statement,
// until the queue is empty. Its statements count as background work.
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
