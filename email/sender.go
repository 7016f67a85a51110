package email

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/osfoundry/osfoundry/store"
)

// Defaults of Options.
const (
	DefaultBatch       = 20
	DefaultLease       = 10 * time.Minute
	DefaultPoll        = 30 * time.Second
	DefaultSweep       = time.Minute
	DefaultMinBackoff  = 30 * time.Second
	DefaultMaxBackoff  = time.Hour
	DefaultMaxAttempts = 12
	// pruneEvery is how often a sender trims sent and failed messages.
	pruneEvery = time.Hour
)

// Options configure a Sender. Zero values take the defaults.
type Options struct {
	Store  *store.Store
	SMTP   SMTP
	Logger *slog.Logger
	// Batch bounds the messages claimed and sent over one connection.
	Batch int
	// Lease holds claimed messages from other senders; a batch stops before it ends.
	Lease time.Duration
	// Poll is the outbox check without a wake-up; Sweep queues replies and digests.
	Poll, Sweep time.Duration
	// MinBackoff and MaxBackoff bound retries; MaxAttempts marks a message failed.
	MinBackoff, MaxBackoff time.Duration
	MaxAttempts            int
}

// FastOptions shortens every wait, for tests of the whole server.
func FastOptions(o Options) Options {
	o.Lease, o.Poll, o.Sweep, o.MinBackoff, o.MaxBackoff = 3*time.Second, 250*time.Millisecond, 200*time.Millisecond, 100*time.Millisecond, time.Second
	return o
}

// Sender sends the email outbox over SMTP.
type Sender struct {
	store    *store.Store
	smtp     SMTP
	log      *slog.Logger
	batch    int
	lease    time.Duration
	poll     time.Duration
	sweep    time.Duration
	min, max time.Duration
	attempts int
	wake     store.Waker
	compose  Composer
	// domain is the sender address's, for the Message-ID.
	domain string
}

// New returns a sender through o.SMTP; composer writes what its sweeps queue.
func New(o Options, composer Composer) *Sender {
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
		store: o.Store, smtp: o.SMTP, log: o.Logger, compose: composer,
		batch: orN(o.Batch, DefaultBatch), attempts: orN(o.MaxAttempts, DefaultMaxAttempts),
		lease: or(o.Lease, DefaultLease), poll: or(o.Poll, DefaultPoll), sweep: or(o.Sweep, DefaultSweep),
		min: or(o.MinBackoff, DefaultMinBackoff), max: or(o.MaxBackoff, DefaultMaxBackoff),
		wake: store.NewWaker(), domain: domainOf(o.SMTP.From, o.SMTP.Host),
	}
}

// domainOf is the domain of an address, or def.
func domainOf(addr, def string) string {
	if a, err := mail.ParseAddress(addr); err == nil {
		if _, d, ok := strings.Cut(a.Address, "@"); ok && d != "" {
			return d
		}
	}
	return def
}

// Wake asks the sender to look for due messages now. It never blocks.
func (s *Sender) Wake() { s.wake.Wake() }

// WakeOn wakes the sender on store.EmailTopic and on each connect; call it before l runs.
func (s *Sender) WakeOn(l *store.Listener) { store.WakeOn(l, store.EmailTopic, s.Wake) }

// Run sends due messages until ctx ends, finishing and recording the batch under way.
func (s *Sender) Run(ctx context.Context) {
	ctx = store.Background(ctx)
	poll := time.NewTicker(s.poll)
	defer poll.Stop()
	var lastPrune time.Time
	dbDown := false
	for {
		more := false
		due, err := s.store.ClaimEmails(ctx, s.batch, s.lease, nil)
		switch {
		case err != nil && ctx.Err() == nil:
			if !dbDown {
				s.log.Warn("email: cannot claim messages; trying again", "err", err)
			}
			dbDown = true
		case err == nil:
			if dbDown {
				s.log.Info("email: claiming messages again")
				dbDown = false
			}
			if len(due) > 0 {
				s.send(ctx, due)
			}
			more = len(due) == s.batch
		}
		if time.Since(lastPrune) > pruneEvery && !dbDown && ctx.Err() == nil {
			lastPrune = time.Now()
			if n, err := s.store.PruneEmails(ctx); err != nil {
				s.log.Warn("email: pruning the outbox failed", "err", err)
			} else if n > 0 {
				s.log.Debug("email: outbox pruned", "deleted", n)
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
		case <-s.wake.C():
		case <-poll.C:
		}
	}
}

// send sends a batch over one connection. A question closed meanwhile is
// skipped: its email would ask for what is decided.
func (s *Sender) send(ctx context.Context, due []store.OutgoingEmail) {
	start := time.Now()
	live := due[:0]
	for i := range due {
		if m := &due[i]; m.Stale {
			s.skip(ctx, m)
		} else {
			live = append(live, *m)
		}
	}
	if due = live; len(due) == 0 {
		return
	}
	c, err := s.smtp.client()
	if err == nil {
		err = c.DialWithContext(context.WithoutCancel(ctx))
	}
	if err != nil {
		for i := range due {
			s.finish(ctx, &due[i], fmt.Errorf("connect to %s: %w", s.smtp.Addr(), err))
		}
		return
	}
	defer c.Close()
	// Past this the lease could run out mid-send, and another sender send it too.
	budget := s.lease - 2*sendTimeout
	for i := range due {
		m := &due[i]
		if budget > 0 && time.Since(start) > budget {
			for j := range due[i:] {
				s.release(ctx, &due[i+j])
			}
			break
		}
		msg, err := s.message(m)
		if err == nil {
			err = c.Send(msg)
		}
		s.finish(ctx, m, err)
	}
	s.log.Debug("email: batch sent", "messages", len(due), "took", time.Since(start).Round(time.Millisecond))
}

// skip records a closed question's email as not sent.
func (s *Sender) skip(ctx context.Context, m *store.OutgoingEmail) {
	s.log.Info("email skipped: its question was answered or expired", "mail_id", m.ID, "kind", m.Kind, "owner_id", m.To.OwnerID)
	if _, err := s.store.FinishEmail(context.WithoutCancel(ctx), m.ID, m.Attempt, store.EmailSkipped, 0, ""); err != nil {
		s.log.Warn("email: recording a skipped message failed; it is looked at again after its lease", "mail_id", m.ID, "err", err)
	}
}

// release gives a message back, for the next claim of any replica.
func (s *Sender) release(ctx context.Context, m *store.OutgoingEmail) {
	if _, err := s.store.FinishEmail(context.WithoutCancel(ctx), m.ID, m.Attempt, store.EmailPending, 0, "not sent yet: its batch ran long"); err != nil {
		s.log.Warn("email: releasing a message failed; it is tried again after its lease", "mail_id", m.ID, "err", err)
	}
}

// message is an outbox row as a message to its owner.
func (s *Sender) message(m *store.OutgoingEmail) (*gomail.Msg, error) {
	msg := gomail.NewMsg()
	if err := msg.From(s.smtp.From); err != nil {
		return nil, permanent{err}
	}
	to, err := mail.ParseAddress(m.To.Email)
	if err != nil {
		return nil, permanent{fmt.Errorf("the owner's address %q: %w", m.To.Email, err)}
	}
	// Encoded whole (headerText): the encoder would let an ASCII "=?…?=" through raw.
	to.Name = headerText(m.To.Name)
	msg.ToMailAddress(to)
	msg.Subject(headerText(m.Subject))
	msg.SetDate()
	msg.SetMessageIDWithValue("osfoundry-mail-" + strconv.FormatInt(m.ID, 10) + "@" + s.domain)
	msg.SetGenHeader(gomail.Header("X-Osfoundry-Kind"), m.Kind)
	msg.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	return msg, nil
}

// permanent marks an error that no retry mends (a malformed address).
type permanent struct{ error }

// finish records an attempt: sent, failed for good, or pending after a backoff.
func (s *Sender) finish(ctx context.Context, m *store.OutgoingEmail, sendErr error) {
	log := s.log.With("mail_id", m.ID, "kind", m.Kind, "owner_id", m.To.OwnerID, "attempt", m.Attempt)
	state, retryIn, msg := store.EmailSent, time.Duration(0), ""
	if sendErr != nil {
		msg = sendErr.Error()
		state = store.EmailPending
		var se *gomail.SendError
		var pe permanent
		if errors.As(sendErr, &pe) || (errors.As(sendErr, &se) && !se.IsTemp() && se.ErrorCode() >= 500) || m.Attempt >= s.attempts {
			state = store.EmailFailed
		} else {
			retryIn = min(s.min<<min(m.Attempt-1, 20), s.max)
		}
	}
	switch state {
	case store.EmailSent:
		log.Info("email sent")
	case store.EmailFailed:
		log.Warn("email not sent; given up", "err", msg)
	default:
		log.Info("email not sent yet; will retry", "err", msg, "retry_in", retryIn)
	}
	store.RecordAttempt(ctx, log, "email attempt", "the message was claimed again after its lease ran out", func(ctx context.Context) (bool, error) {
		return s.store.FinishEmail(ctx, m.ID, m.Attempt, state, retryIn, msg)
	})
}

// RunSweeps queues wanted replies and due digests every Sweep; the store claims
// each owner's row for one replica.
func (s *Sender) RunSweeps(ctx context.Context) {
	ctx = store.Background(ctx)
	t := time.NewTicker(s.sweep)
	defer t.Stop()
	for {
		if n, err := s.store.QueueReplyEmails(ctx, s.compose.Reply); err != nil && ctx.Err() == nil {
			s.log.Warn("email: queueing replies failed", "err", err)
		} else if n > 0 {
			s.log.Debug("email: replies queued", "messages", n)
		}
		if n, err := s.store.QueueDigests(ctx, s.compose.Digest); err != nil && ctx.Err() == nil {
			s.log.Warn("email: queueing digests failed", "err", err)
		} else if n > 0 {
			s.log.Debug("email: digests queued", "messages", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
