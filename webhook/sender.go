// Package webhook delivers the webhook outbox: every replica runs a
// Sender that claims due deliveries from the database, posts them through the
// SSRF-guarded client (Standard Webhooks signatures, 10 s timeout, no
// redirects followed) and records each attempt. Deliveries are written in the
// note's own transaction (store.insertNote), so none is lost to a crash; a
// claimed delivery is held under a lease, so one whose sender died is tried
// again once its lease runs out.
package webhook

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/osfoundry/osfoundry/outbound"
	"github.com/osfoundry/osfoundry/store"
)

// Defaults of Options.
const (
	DefaultWorkers     = 16
	DefaultLease       = time.Minute
	DefaultSweep       = 10 * time.Second
	DefaultMinBackoff  = 5 * time.Second
	DefaultMaxBackoff  = time.Hour
	DefaultRetryWindow = 24 * time.Hour
	// pruneEvery is how often a sender trims the delivery log.
	pruneEvery = 10 * time.Minute
)

// Options configure a Sender. Zero durations take the defaults.
type Options struct {
	Store *store.Store
	// BaseURL is the public origin, for the links in deliveries.
	BaseURL string
	Logger  *slog.Logger
	// AllowPrivateTargets lets deliveries reach addresses that are not
	// public (the operator's --allow-private-targets).
	AllowPrivateTargets bool
	// Workers bounds the deliveries this replica has in flight at once.
	Workers int
	// Lease is how long a claimed delivery is held before another sender may
	// try it again; it must outlast the 10 s request timeout.
	Lease time.Duration
	// Sweep is how often the outbox is checked without a wake-up: for
	// retries other replicas scheduled and leases that ran out.
	Sweep time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts; RetryWindow
	// is how long after a delivery was queued the sender gives up on it.
	MinBackoff, MaxBackoff, RetryWindow time.Duration
}

// FastOptions shortens every wait, for tests of the whole server: retries
// after 100 ms to 1 s, a 3 s lease, a sweep every 250 ms.
func FastOptions(o Options) Options {
	o.Lease, o.Sweep, o.MinBackoff, o.MaxBackoff = 3*time.Second, 250*time.Millisecond, 100*time.Millisecond, time.Second
	return o
}

// Sender delivers the outbox. Build it with New and run it with Run.
type Sender struct {
	store   *store.Store
	base    string
	log     *slog.Logger
	client  *http.Client
	workers int
	lease   time.Duration
	sweep   time.Duration
	policy  retryPolicy
	wake    store.Waker
}

// New returns a sender; start it with Run, wake it with Wake.
func New(o Options) *Sender {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	or := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	workers := o.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	return &Sender{
		store:   o.Store,
		base:    strings.TrimRight(o.BaseURL, "/"),
		log:     o.Logger,
		client:  outbound.NewClient(outbound.Options{AllowPrivate: o.AllowPrivateTargets}),
		workers: workers,
		lease:   or(o.Lease, DefaultLease),
		sweep:   or(o.Sweep, DefaultSweep),
		policy: retryPolicy{minBackoff: or(o.MinBackoff, DefaultMinBackoff), maxBackoff: or(o.MaxBackoff, DefaultMaxBackoff),
			window: or(o.RetryWindow, DefaultRetryWindow)},
		wake: store.NewWaker(),
	}
}

// Wake asks the sender to look for due deliveries now. It never blocks.
func (s *Sender) Wake() { s.wake.Wake() }

// WakeOn makes l wake the sender for each notification on
// store.WebhookTopic, and each time it connects, since notifications sent
// while it was away are lost. Call it before l runs.
func (s *Sender) WakeOn(l *store.Listener) { store.WakeOn(l, store.WebhookTopic, s.Wake) }

// done is what a delivery goroutine reports back to Run.
type done struct {
	id int64
	// retryAt is when this sender should look again (zero: no retry scheduled).
	retryAt time.Time
}

// Run claims and delivers until ctx ends, then waits for the deliveries in
// flight (each bounded by the request timeout) and records their results.
// Its statements count as background work.
func (s *Sender) Run(ctx context.Context) {
	ctx = store.Background(ctx)
	finished := make(chan done)
	inflight := map[int64]bool{}
	sweep := time.NewTicker(s.sweep)
	defer sweep.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	var retryAt time.Time
	schedule := func(at time.Time) {
		if at.IsZero() || (!retryAt.IsZero() && !at.Before(retryAt)) {
			return
		}
		retryAt = at
		retry.Reset(time.Until(at))
	}
	var lastPrune time.Time
	dbDown := false
	look := true
	stopping := ctx.Done()
	for {
		if look && ctx.Err() == nil && len(inflight) < s.workers {
			look = false
			free := s.workers - len(inflight)
			held := make([]int64, 0, len(inflight))
			for id := range inflight {
				held = append(held, id)
			}
			due, err := s.store.ClaimWebhookDeliveries(ctx, free, s.lease, held)
			switch {
			case err != nil && ctx.Err() == nil:
				if !dbDown {
					s.log.Warn("webhooks: cannot claim deliveries; trying again", "err", err)
				}
				dbDown = true
				schedule(time.Now().Add(min(s.sweep, time.Second)))
			case err == nil:
				if dbDown {
					s.log.Info("webhooks: claiming deliveries again")
					dbDown = false
				}
				for i := range due {
					d := due[i]
					inflight[d.ID] = true
					go func() { finished <- s.deliver(ctx, &d) }()
				}
				// A full batch may have left more behind.
				look = len(due) == free
			}
		}
		if ctx.Err() != nil && len(inflight) == 0 {
			return
		}
		select {
		case <-stopping:
			stopping = nil
		case <-s.wake.C():
			look = true
		case r := <-finished:
			// The endpoint's next delivery is its head now. Deliveries that
			// finished meanwhile are taken in too, so one claim serves them all.
			for more := true; more; {
				delete(inflight, r.id)
				schedule(r.retryAt)
				select {
				case r = <-finished:
				default:
					more = false
				}
			}
			look = true
		case <-retry.C:
			retryAt = time.Time{}
			look = true
		case <-sweep.C:
			look = true
			if time.Since(lastPrune) > pruneEvery && !dbDown {
				lastPrune = time.Now()
				if n, err := s.store.PruneWebhookDeliveries(ctx); err != nil {
					s.log.Warn("webhooks: pruning the delivery log failed", "err", err)
				} else if n > 0 {
					s.log.Debug("webhooks: delivery log pruned", "deleted", n)
				}
			}
		}
	}
}

// deliver makes one attempt and records it. The request is not cut short
// when ctx ends (the client's timeout bounds it), so a shutdown does not
// turn a delivery the receiver is handling into a duplicate.
func (s *Sender) deliver(ctx context.Context, d *store.DueWebhook) done {
	start := time.Now()
	msgID := MessageID(d.ID)
	log := s.log.With("delivery_id", d.ID, "webhook_id", msgID, "endpoint_id", d.EndpointID, "attempt", d.Attempt)
	if d.Note != nil {
		log = log.With("note_id", d.Note.ID)
	}
	var v verdict
	payload, err := body(d, s.base)
	if err == nil {
		var req *http.Request
		req, err = http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, d.URL, bytes.NewReader(payload))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("User-Agent", "osFoundry-Webhooks/1")
			sign(req.Header, d.Secret, msgID, time.Now(), payload)
			var res *http.Response
			res, err = s.client.Do(req)
			v = judge(res, err, time.Now())
			if res != nil {
				// Drain a little so the connection can be reused.
				io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
				res.Body.Close()
			}
		}
	}
	if payload == nil || (err != nil && v.msg == "") {
		v = verdict{msg: "could not build the request: " + printable(err.Error(), 200)}
	}
	a := s.policy.next(v, d.Attempt, d.Now.Sub(d.CreatedAt)+time.Since(start))
	took := time.Since(start).Round(time.Millisecond)
	switch a.State {
	case store.DeliveryDelivered:
		log.Info("webhook delivered", "status", a.ResponseCode, "took", took)
	case store.DeliveryFailed:
		log.Warn("webhook delivery failed", "status", a.ResponseCode, "err", a.Error, "took", took)
	default:
		log.Info("webhook delivery will be retried", "status", a.ResponseCode, "err", a.Error, "retry_in", a.RetryIn.Round(time.Millisecond), "took", took)
	}
	s.record(ctx, d, a, log)
	r := done{id: d.ID}
	if a.State == store.DeliveryPending {
		r.retryAt = time.Now().Add(a.RetryIn)
	}
	return r
}

// record stores an attempt's result. While the database is unreachable it
// keeps trying (until ctx ends): the delivery stays held by this sender, so
// this replica does not send it again when the lease runs out meanwhile.
func (s *Sender) record(ctx context.Context, d *store.DueWebhook, a store.WebhookAttempt, log *slog.Logger) {
	store.RecordAttempt(ctx, log, "webhook attempt", "the delivery was claimed again after its lease ran out, or its endpoint was deleted",
		func(ctx context.Context) (bool, error) { return s.store.FinishWebhookAttempt(ctx, d.ID, d.Attempt, a) })
}
