package store

import (
	"context"
	"log/slog"
	"time"
)

// RecordAttempt runs finish, the write that records an outbox row's attempt (a webhook delivery's,
// a mail's), until it is written or ctx ends, backing off from 100 ms to 5 s.
func RecordAttempt(ctx context.Context, log *slog.Logger, what, lost string, finish func(context.Context) (bool, error)) {
	wait := 100 * time.Millisecond
	for {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		ok, err := finish(rctx)
		cancel()
		switch {
		case err == nil && !ok:
			log.Warn(what + " not recorded: " + lost)
			return
		case err == nil:
			return
		case ctx.Err() != nil:
			log.Warn(what+" not recorded before shutdown; it is tried again after its lease", "err", err)
			return
		}
		log.Warn(what+" not recorded yet; retrying", "err", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		wait = min(wait*2, 5*time.Second)
	}
}
