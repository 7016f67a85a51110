package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/osfoundry/osfoundry/store"
)

// outboxTimeout bounds the scrape's one outbox statement.
const outboxTimeout = 2 * time.Second

func desc(subsystem, name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, subsystem, name), help, labels, nil)
}

// collector reads its descriptions' values at scrape time.
type collector struct {
	descs   []*prometheus.Desc
	collect func(ch chan<- prometheus.Metric)
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }

// WatchStore exports the store's statements, pool, password hashes and webhook
// outbox, read at each scrape.
func (m *Metrics) WatchStore(st *store.Store) {
	var (
		statements    = desc("db", "statements_total", "Statements sent to PostgreSQL, BEGIN and COMMIT included, by origin: request (serving a request) or background (note hub, webhook sender, this scrape).", "origin")
		acquired      = desc("db_pool", "acquired_connections", "Connections of the pool in use now.")
		idle          = desc("db_pool", "idle_connections", "Idle connections of the pool.")
		total         = desc("db_pool", "total_connections", "Connections of the pool, in use, idle or being opened.")
		maxConns      = desc("db_pool", "max_connections", "The most connections the pool may hold.")
		acquires      = desc("db_pool", "acquires_total", "Connections taken from the pool.")
		acquireSecs   = desc("db_pool", "acquire_duration_seconds_total", "Time spent taking connections from the pool, waits included.")
		emptyAcquires = desc("db_pool", "empty_acquires_total", "Takes that found no idle connection and had to wait for one (opened or released).")
		canceled      = desc("db_pool", "canceled_acquires_total", "Takes given up because their request ended first.")
		pending       = desc("webhook_outbox", "pending", "Webhook deliveries not yet delivered or failed.")
		due           = desc("webhook_outbox", "due", "Endpoints with a delivery due now that no sender is sending.")
		oldestDue     = desc("webhook_outbox", "oldest_due_seconds", "How long the most overdue of those has been due; growing means no sender runs or they cannot keep up.")
		hashes        = desc("", "password_hashes_total", "Password hashes (argon2id) by outcome: run, or refused because as many as may run at once were running (the request got 503).", "outcome")
	)
	m.reg.MustRegister(&collector{
		descs: []*prometheus.Desc{statements, acquired, idle, total, maxConns, acquires, acquireSecs, emptyAcquires, canceled, pending, due, oldestDue, hashes},
		collect: func(ch chan<- prometheus.Metric) {
			h := st.Hashes().Counts()
			ch <- prometheus.MustNewConstMetric(hashes, prometheus.CounterValue, float64(h.Run), "run")
			ch <- prometheus.MustNewConstMetric(hashes, prometheus.CounterValue, float64(h.Refused), "refused")
			n := st.StatementCounts()
			ch <- prometheus.MustNewConstMetric(statements, prometheus.CounterValue, float64(n.Request), "request")
			ch <- prometheus.MustNewConstMetric(statements, prometheus.CounterValue, float64(n.Background), "background")
			p := st.PoolStat()
			ch <- prometheus.MustNewConstMetric(acquired, prometheus.GaugeValue, float64(p.AcquiredConns()))
			ch <- prometheus.MustNewConstMetric(idle, prometheus.GaugeValue, float64(p.IdleConns()))
			ch <- prometheus.MustNewConstMetric(total, prometheus.GaugeValue, float64(p.TotalConns()))
			ch <- prometheus.MustNewConstMetric(maxConns, prometheus.GaugeValue, float64(p.MaxConns()))
			ch <- prometheus.MustNewConstMetric(acquires, prometheus.CounterValue, float64(p.AcquireCount()))
			ch <- prometheus.MustNewConstMetric(acquireSecs, prometheus.CounterValue, p.AcquireDuration().Seconds())
			ch <- prometheus.MustNewConstMetric(emptyAcquires, prometheus.CounterValue, float64(p.EmptyAcquireCount()))
			ch <- prometheus.MustNewConstMetric(canceled, prometheus.CounterValue, float64(p.CanceledAcquireCount()))
			ctx, cancel := context.WithTimeout(store.Background(context.Background()), outboxTimeout)
			defer cancel()
			if o, err := st.WebhookOutboxDepth(ctx); err == nil {
				ch <- prometheus.MustNewConstMetric(pending, prometheus.GaugeValue, float64(o.Pending))
				ch <- prometheus.MustNewConstMetric(due, prometheus.GaugeValue, float64(o.Due))
				ch <- prometheus.MustNewConstMetric(oldestDue, prometheus.GaugeValue, o.OldestDueAge.Seconds())
			}
		},
	})
}

// WatchListener exports the mail cache and each notification's lag; call it
// before the listener runs.
func (m *Metrics) WatchListener(l *store.Listener, c *store.MailCache) {
	var (
		listening = desc("note_hub", "listening", "1 while the note hub's listening connection is up (web polls are answered from memory), 0 while it is down (they query the database).")
		sessions  = desc("note_hub", "tracked_sessions", "Sessions whose newest note the note hub keeps current.")
	)
	m.reg.MustRegister(&collector{
		descs: []*prometheus.Desc{listening, sessions},
		collect: func(ch chan<- prometheus.Metric) {
			s := c.State()
			up := 0.0
			if s.Current {
				up = 1
			}
			ch <- prometheus.MustNewConstMetric(listening, prometheus.GaugeValue, up)
			ch <- prometheus.MustNewConstMetric(sessions, prometheus.GaugeValue, float64(s.Sessions))
		},
	})
	// Across two replicas' clocks, so negative lags count as zero.
	store.Listen(l, store.NoteTopic, func(n store.NoteNotice) {
		if !n.Sent.IsZero() {
			m.ObserveHubLag(max(time.Since(n.Sent), 0))
		}
	})
}
