// Package timers fires the questions' timers. Each due row is claimed with FOR
// UPDATE SKIP LOCKED and worked in that transaction: once, on one replica.
package timers

import (
	"context"
	"log/slog"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// Defaults of Options.
const (
	// DefaultBatch is how many due timers one transaction fires.
	DefaultBatch = 100
	// DefaultIdle is the longest sleep, the net for a wake-up missed during a reconnect.
	DefaultIdle = time.Minute
	// retryAfter is the wait after a failed look at the database.
	retryAfter = 2 * time.Second
)

// Options configure a Runner. Zero values take the defaults.
type Options struct {
	Store  *store.Store
	Logger *slog.Logger
	// Compose writes the questions' emails; nil when email is off.
	Compose store.ComposeQuestionEmail
	// ComposeApproval writes the approvals' emails; nil when email is off.
	ComposeApproval store.ComposeApprovalEmail
	Batch           int
	Idle            time.Duration
}

// Runner fires due question timers. Build it with New, run it with Run.
type Runner struct {
	store   *store.Store
	log     *slog.Logger
	compose store.ComposeQuestionEmail
	// composeApproval writes the approvals' emails (nil: none).
	composeApproval store.ComposeApprovalEmail
	batch           int
	idle            time.Duration
	wake            store.Waker
}

// New returns a runner; start it with Run, wake it with Wake.
func New(o Options) *Runner {
	r := &Runner{store: o.Store, log: o.Logger, compose: o.Compose, composeApproval: o.ComposeApproval, batch: o.Batch, idle: o.Idle, wake: store.NewWaker()}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.batch <= 0 {
		r.batch = DefaultBatch
	}
	if r.idle <= 0 {
		r.idle = DefaultIdle
	}
	return r
}

// Wake asks the runner to look again now; it never blocks.
func (r *Runner) Wake() { r.wake.Wake() }

// WakeOn wakes the runner on store.TimerTopic and on each (re)connect.
func (r *Runner) WakeOn(l *store.Listener) { store.WakeOn(l, store.TimerTopic, r.Wake) }

// Run fires due timers until ctx ends, as background work.
func (r *Runner) Run(ctx context.Context) {
	ctx = store.Background(ctx)
	sleep := time.NewTimer(0)
	defer sleep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sleep.C:
		case <-r.wake.C():
		}
		sleep.Reset(r.fire(ctx))
	}
}

// fire fires every due timer and says how long to sleep.
func (r *Runner) fire(ctx context.Context) time.Duration {
	for ctx.Err() == nil {
		res, err := r.store.FireQuestionTimers(ctx, r.batch, r.compose)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("question timers failed", "err", err)
			}
			return retryAfter
		}
		if res.Fired > 0 {
			r.log.Info("question timers fired", "fired", res.Fired, "webhook_deliveries", res.Deliveries, "mails", res.Mails, "expired", res.Expired)
		}
		if res.Fired < r.batch {
			break
		}
	}
	for ctx.Err() == nil {
		res, err := r.store.FireApprovalTimers(ctx, r.batch, r.composeApproval)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("approval timers failed", "err", err)
			}
			return retryAfter
		}
		if res.Fired > 0 {
			r.log.Info("approval timers fired", "fired", res.Fired, "webhook_deliveries", res.Deliveries, "mails", res.Mails, "expired", res.Expired)
		}
		if res.Fired < r.batch {
			break
		}
	}
	next, pending, err := r.store.NextQuestionTimer(ctx)
	if err == nil {
		var nextApproval time.Duration
		var approvals bool
		if nextApproval, approvals, err = r.store.NextApprovalTimer(ctx); approvals && (!pending || nextApproval < next) {
			next, pending = nextApproval, true
		}
	}
	switch {
	case err != nil:
		if ctx.Err() == nil {
			r.log.Error("question timers: next due", "err", err)
		}
		return retryAfter
	case !pending:
		return r.idle
	}
	// A few milliseconds past the due time, by the database's clock.
	return min(next+5*time.Millisecond, r.idle)
}
