package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/osfoundry/osfoundry/outbound"
	"github.com/osfoundry/osfoundry/store"
)

// Defaults of Options.
const (
	DefaultBatch       = 20
	DefaultLease       = 5 * time.Minute
	DefaultPoll        = 30 * time.Second
	DefaultMinBackoff  = 10 * time.Second
	DefaultMaxBackoff  = time.Hour
	DefaultMaxAttempts = 12
	// TTL is how long a push service keeps a push for a device that is off.
	TTL = 24 * time.Hour
	// sendTimeout bounds one push.
	sendTimeout = 10 * time.Second
	pruneEvery  = time.Hour
)

// Options configure a Sender. Zero values take the defaults.
type Options struct {
	Store *store.Store
	Keys  *Keys
	// Subject is the VAPID contact (Subject of the base URL).
	Subject string
	Logger  *slog.Logger
	// AllowPrivate lets pushes reach non-public addresses; Allow lists single ones (tests).
	AllowPrivate bool
	Allow        []netip.AddrPort
	Batch        int
	// Lease holds claimed pushes from other senders; Poll checks without a wake-up.
	Lease, Poll time.Duration
	// MinBackoff and MaxBackoff bound retries (and a 429's Retry-After).
	MinBackoff, MaxBackoff time.Duration
	MaxAttempts            int
}

// FastOptions shortens every wait, for tests of the whole server.
func FastOptions(o Options) Options {
	o.Lease, o.Poll, o.MinBackoff, o.MaxBackoff = 3*time.Second, 250*time.Millisecond, 100*time.Millisecond, time.Second
	return o
}

// Sender delivers the push outbox.
type Sender struct {
	store    *store.Store
	keys     *Keys
	subject  string
	log      *slog.Logger
	client   *http.Client
	batch    int
	lease    time.Duration
	poll     time.Duration
	min, max time.Duration
	attempts int
	wake     chan struct{}
}

// New returns a sender of the push outbox.
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
	orN := func(n, def int) int {
		if n > 0 {
			return n
		}
		return def
	}
	return &Sender{
		store: o.Store, keys: o.Keys, subject: o.Subject, log: o.Logger,
		client: outbound.NewClient(outbound.Options{AllowPrivate: o.AllowPrivate, Allow: o.Allow, Timeout: sendTimeout}),
		batch:  orN(o.Batch, DefaultBatch), attempts: orN(o.MaxAttempts, DefaultMaxAttempts),
		lease: or(o.Lease, DefaultLease), poll: or(o.Poll, DefaultPoll),
		min: or(o.MinBackoff, DefaultMinBackoff), max: or(o.MaxBackoff, DefaultMaxBackoff),
		wake: make(chan struct{}, 1),
	}
}

// Wake asks the sender to look for due pushes now. It never blocks.
func (s *Sender) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// WakeOn wakes the sender on store.PushTopic and on each connect; call it before l runs.
func (s *Sender) WakeOn(l *store.Listener) {
	store.Listen(l, store.PushTopic, func(struct{}) { s.Wake() })
	l.Watch(func(connected bool) {
		if connected {
			s.Wake()
		}
	})
}

// Run sends due pushes until ctx ends, finishing the batch under way.
func (s *Sender) Run(ctx context.Context) {
	ctx = store.Background(ctx)
	poll := time.NewTicker(s.poll)
	defer poll.Stop()
	var lastPrune time.Time
	dbDown := false
	for {
		more := false
		due, err := s.store.ClaimPushes(ctx, s.batch, s.lease)
		switch {
		case err != nil && ctx.Err() == nil:
			if !dbDown {
				s.log.Warn("push: cannot claim pushes; trying again", "err", err)
			}
			dbDown = true
		case err == nil:
			if dbDown {
				s.log.Info("push: claiming pushes again")
				dbDown = false
			}
			s.send(ctx, due)
			more = len(due) == s.batch
		}
		if time.Since(lastPrune) > pruneEvery && !dbDown && ctx.Err() == nil {
			lastPrune = time.Now()
			if _, err := s.store.PrunePushes(ctx); err != nil {
				s.log.Warn("push: pruning the outbox failed", "err", err)
			}
		}
		if ctx.Err() != nil {
			return
		}
		if more {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-poll.C:
		}
	}
}

// send sends a batch, skipping pushes about what was read or decided since.
func (s *Sender) send(ctx context.Context, due []store.OutgoingPush) {
	start := time.Now()
	budget := s.lease - 2*sendTimeout
	for i := range due {
		p := &due[i]
		if budget > 0 && time.Since(start) > budget {
			// Past this the lease could run out mid-send, and another sender send it too.
			s.record(ctx, p, store.PushPending, 0, "not sent yet: its batch ran long")
			continue
		}
		if p.Stale {
			s.log.Info("push skipped: the owner read the note, or its question was decided", "push_id", p.ID, "kind", p.Kind)
			s.record(ctx, p, store.PushSkipped, 0, "")
			continue
		}
		s.finish(ctx, p, s.deliver(ctx, p))
	}
}

// result is a push service's answer to one push.
type result struct {
	status     int
	retryAfter time.Duration
	err        error
}

// deliver encrypts and posts one push (RFC 8030 §5).
func (s *Sender) deliver(ctx context.Context, p *store.OutgoingPush) result {
	payload := Compose(p)
	body, err := json.Marshal(payload)
	if err != nil {
		return result{err: err}
	}
	msg, err := Encrypt(p.P256dh, p.Auth, body)
	if err != nil {
		return result{err: permanent{err}}
	}
	auth, err := s.keys.authorization(p.Endpoint, s.subject, time.Now())
	if err != nil {
		return result{err: permanent{err}}
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, p.Endpoint, strings.NewReader(string(msg)))
	if err != nil {
		return result{err: permanent{err}}
	}
	h := req.Header
	h.Set("Authorization", auth)
	h.Set("Content-Encoding", "aes128gcm")
	h.Set("Content-Type", "application/octet-stream")
	h.Set("TTL", strconv.Itoa(int(TTL.Seconds())))
	h.Set("Urgency", p.Urgency)
	// A push sent again after a crash replaces the first while the device is away.
	h.Set("Topic", payload.Tag)
	resp, err := s.client.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	text, _ := outbound.ReadBody(resp.Body, 512)
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) //nolint:errcheck
	r := result{status: resp.StatusCode}
	if resp.StatusCode >= 300 {
		r.err = fmt.Errorf("push service answered %s: %s", resp.Status, strings.TrimSpace(string(text)))
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			r.retryAfter = time.Duration(secs) * time.Second
		}
	}
	return r
}

// permanent marks an error no retry mends (keys that do not parse).
type permanent struct{ error }

// finish records a result: sent; subscription dropped on 404 or 410; retried on
// a failed connection, 429 or 5xx; failed otherwise.
func (s *Sender) finish(ctx context.Context, p *store.OutgoingPush, r result) {
	log := s.log.With("push_id", p.ID, "kind", p.Kind, "owner_id", p.OwnerID, "subscription_id", p.SubscriptionID, "attempt", p.Attempt)
	if r.status == http.StatusNotFound || r.status == http.StatusGone {
		log.Info("push subscription dropped: its push service no longer knows it", "status", r.status)
		if err := s.store.DropPushSubscription(context.WithoutCancel(ctx), p.SubscriptionID); err != nil {
			log.Warn("push: dropping the subscription failed; it is tried again after its lease", "err", err)
		}
		return
	}
	if r.err == nil {
		log.Info("push sent", "status", r.status)
		s.record(ctx, p, store.PushSent, 0, "")
		return
	}
	var pe permanent
	retryable := r.status == 0 || r.status == http.StatusTooManyRequests || r.status >= 500
	if errors.As(r.err, &pe) || !retryable || p.Attempt >= s.attempts {
		log.Warn("push not sent; given up", "err", r.err)
		s.record(ctx, p, store.PushFailed, 0, r.err.Error())
		return
	}
	retryIn := min(s.min<<min(p.Attempt-1, 20), s.max)
	if r.retryAfter > 0 {
		retryIn = min(max(r.retryAfter, s.min), s.max)
	}
	log.Info("push not sent yet; will retry", "err", r.err, "retry_in", retryIn)
	s.record(ctx, p, store.PushPending, retryIn, r.err.Error())
}

// record writes a push's result, retrying while the database is away.
func (s *Sender) record(ctx context.Context, p *store.OutgoingPush, state string, retryIn time.Duration, msg string) {
	log := s.log.With("push_id", p.ID, "attempt", p.Attempt)
	store.RecordAttempt(ctx, log, "push attempt", "the push was claimed again after its lease ran out", func(ctx context.Context) (bool, error) {
		return s.store.FinishPush(ctx, p.ID, p.Attempt, state, retryIn, msg)
	})
}
