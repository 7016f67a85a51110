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

// Listener is a replica's one LISTEN connection, passing each notification to its topic's
// subscribers. Notifications sent while it is away are lost, so subscribers that keep state
// resynchronise when Watch says it is connected again; subscribers must not block.
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

type topicDecoder interface {
	channelName() string
	decodeAny(payload string) (any, bool)
}

func (t Topic[T]) channelName() string { return t.channel }

func (t Topic[T]) decodeAny(p string) (any, bool) { return t.decode(p) }

var topics = []topicDecoder{NoteTopic, ReceiptTopic, ReadsTopic, PresenceTopic, SignOutTopic, WebhookTopic, QuestionTopic, TimerTopic, EmailTopic, ApprovalTopic, PushTopic, PersonTopic}

// NewListener returns a listener over the store's database; start it with Run.
func (s *Store) NewListener(log *slog.Logger) *Listener {
	if log == nil {
		log = slog.Default()
	}
	return &Listener{store: s, log: log, subs: map[string][]*Subscription{}, ready: make(chan struct{})}
}

// Listen makes fn hear every notification on topic, decoded; a payload its topic cannot read is
// logged and dropped.
func Listen[T any](l *Listener, topic Topic[T], fn func(T)) *Subscription {
	sub := &Subscription{l: l, channel: topic.channel, notify: func(v any) { fn(v.(T)) }}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subs[topic.channel] = append(l.subs[topic.channel], sub)
	return sub
}

// Watch makes fn hear whether the listener is connected: at once, then at every change. fn runs
// with the listener's lock held: it must not call the listener.
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

// Run listens until ctx ends, reconnecting with backoff when the connection drops.
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

func (l *Listener) setConnected(up bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.connected = up
	for _, w := range l.watchers {
		w.status(up)
	}
}

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

func (l *Listener) pass(channel string, v any) {
	l.mu.Lock()
	subs := slices.Clone(l.subs[channel])
	l.mu.Unlock()
	for _, s := range subs {
		s.notify(v)
	}
}

func publish[T any](l *Listener, topic Topic[T], v T) { l.pass(topic.channel, v) }
