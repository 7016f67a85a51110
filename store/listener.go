package store

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listener is a replica's one LISTEN connection: it hears every channel of
// topics.go and passes each notification, decoded once by its topic, to the
// subscribers of that topic (Listen), and tells its watchers (Watch) when it
// connects and disconnects: notifications sent while it is away are lost, so
// a subscriber that keeps state resynchronises when it hears it is connected
// again. It reconnects with backoff. It lives in the store package because it
// shares the store's connection settings and statement counting.
//
// Subscribers are called from the listener's goroutine (and, for NoteTopic,
// from MailCache's sweep) and must not block.
type Listener struct {
	store *Store
	log   *slog.Logger

	mu        sync.Mutex
	connected bool
	subs      map[string][]*Subscription
	watchers  []*Subscription
	ready     chan struct{}
	once      sync.Once
}

// Subscription is one subscriber of a listener: to a topic (Listen) or to
// its connection's state (Watch).
type Subscription struct {
	l       *Listener
	channel string
	notify  func(any)
	status  func(connected bool)
}

// ListenerApplicationName names the listening connection in pg_stat_activity.
const ListenerApplicationName = "osfoundry-note-hub"

// Reconnect backoff bounds.
const (
	listenMinBackoff = 100 * time.Millisecond
	listenMaxBackoff = 10 * time.Second
)

// topicDecoder is what the listener needs of a Topic whatever its T.
type topicDecoder interface {
	channelName() string
	decodeAny(payload string) (any, bool)
}

func (t Topic[T]) channelName() string { return t.channel }

func (t Topic[T]) decodeAny(p string) (any, bool) { return t.decode(p) }

// topics are every topic the listener LISTENs on.
var topics = []topicDecoder{NoteTopic, ReceiptTopic, ReadsTopic, PresenceTopic, SignOutTopic, WebhookTopic, QuestionTopic, TimerTopic, EmailTopic, ApprovalTopic, PushTopic, PersonTopic}

// NewListener returns a listener over the store's database; start it with Run.
func (s *Store) NewListener(log *slog.Logger) *Listener {
	if log == nil {
		log = slog.Default()
	}
	return &Listener{store: s, log: log, subs: map[string][]*Subscription{}, ready: make(chan struct{})}
}

// Listen makes fn hear every notification on topic, decoded; a payload its
// topic cannot read is logged and dropped. It may be called at any time.
func Listen[T any](l *Listener, topic Topic[T], fn func(T)) *Subscription {
	sub := &Subscription{l: l, channel: topic.channel, notify: func(v any) { fn(v.(T)) }}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subs[topic.channel] = append(l.subs[topic.channel], sub)
	return sub
}

// Watch makes fn hear whether the listener is connected: at once, then at
// every change. After false, notifications are lost until the next true,
// which fn hears after LISTEN took effect and before any notification of the
// new connection is passed on. fn runs with the listener's lock held: it
// must not call the listener.
func (l *Listener) Watch(fn func(connected bool)) *Subscription {
	sub := &Subscription{l: l, status: fn}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watchers = append(l.watchers, sub)
	fn(l.connected)
	return sub
}

// Unlisten ends the subscription: its function hears nothing that arrives
// after Unlisten has returned.
func (s *Subscription) Unlisten() {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.status != nil {
		l.watchers = slices.DeleteFunc(l.watchers, func(w *Subscription) bool { return w == s })
		return
	}
	l.subs[s.channel] = slices.DeleteFunc(l.subs[s.channel], func(w *Subscription) bool { return w == s })
}

// Ready is closed the first time the listener is connected.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Run listens until ctx ends, reconnecting with backoff when the connection
// drops. Its statements count as background work.
func (l *Listener) Run(ctx context.Context) {
	ctx = Background(ctx)
	backoff := listenMinBackoff
	for ctx.Err() == nil {
		start := time.Now()
		err := l.listen(ctx)
		l.setConnected(false)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			backoff = listenMinBackoff
		}
		l.log.Warn("note hub: listening connection lost; web polls query the database until it is back", "err", err, "retry_in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, listenMaxBackoff)
	}
}

// setConnected records the connection's state and tells the watchers.
func (l *Listener) setConnected(up bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.connected = up
	for _, w := range l.watchers {
		w.status(up)
	}
}

// listen runs one connection: LISTEN on every topic, tell the watchers, then
// pass notifications on until the connection fails or ctx ends.
func (l *Listener) listen(ctx context.Context) error {
	cfg := l.store.pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = ListenerApplicationName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	listen := make([]string, len(topics))
	for i, t := range topics {
		listen[i] = "LISTEN " + pgx.Identifier{t.channelName()}.Sanitize()
	}
	if _, err := conn.Exec(ctx, strings.Join(listen, "; ")); err != nil {
		return err
	}
	l.setConnected(true)
	l.once.Do(func() { close(l.ready) })
	l.log.Debug("note hub listening")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.deliver(n.Channel, n.Payload)
	}
}

// deliver decodes a notification once and passes it to its topic's subscribers.
func (l *Listener) deliver(channel, payload string) {
	for _, t := range topics {
		if t.channelName() != channel {
			continue
		}
		v, ok := t.decodeAny(payload)
		if !ok {
			l.log.Warn("note hub: unexpected payload", "channel", channel, "payload", payload)
			return
		}
		l.pass(channel, v)
		return
	}
}

// pass calls the subscribers of channel with v.
func (l *Listener) pass(channel string, v any) {
	l.mu.Lock()
	subs := slices.Clone(l.subs[channel])
	l.mu.Unlock()
	for _, s := range subs {
		s.notify(v)
	}
}

// publish passes v to the subscribers of topic as if it had been heard: a
// note found without its notification.
func publish[T any](l *Listener, topic Topic[T], v T) { l.pass(topic.channel, v) }
