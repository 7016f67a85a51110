// Package webhook delivers the webhook outbox from every replica, through the
// SSRF guard, under a lease, with Standard Webhooks signatures.
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
	// AllowPrivateTargets lets deliveries reach non-public addresses.
	AllowPrivateTargets bool
	// Workers bounds the deliveries this replica has in flight at once.
	Workers int
	// Lease holds a claimed delivery; it must outlast the 10 s request timeout.
	Lease time.Duration
	// Sweep checks for other replicas' retries and leases that ran out.
	Sweep time.Duration
	// MinBackoff and MaxBackoff bound retries; RetryWindow is when the sender gives up.
	MinBackoff, MaxBackoff, RetryWindow time.Duration
}

// FastOptions shortens every wait, for tests of the whole server.
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

// WakeOn wakes the sender on store.WebhookTopic and on each connect, since
// notifications sent while away are lost. Call it before l runs.
func (s *Sender) WakeOn(l *store.Listener) { store.WakeOn(l, store.WebhookTopic, s.Wake) }

// done is what a delivery goroutine reports back to Run.
type done struct {
	id int64
	// retryAt is when this sender should look again (zero: no retry scheduled).
	retryAt time.Time
}

// Run delivers until ctx ends, then records the deliveries in flight.
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
			// The endpoint's next delivery is its head now; one claim serves it.
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

// deliver's request outlives ctx (the client's timeout bounds it), so that a
// shutdown does not turn a delivery into a duplicate.
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

// record retries while the database is down: the delivery stays held here, so
// this replica does not send it again when the lease runs out.
func (s *Sender) record(ctx context.Context, d *store.DueWebhook, a store.WebhookAttempt, log *slog.Logger) {
	store.RecordAttempt(ctx, log, "webhook attempt", "the delivery was claimed again after its lease ran out, or its endpoint was deleted",
		func(ctx context.Context) (bool, error) { return s.store.FinishWebhookAttempt(ctx, d.ID, d.Attempt, a) })
}
