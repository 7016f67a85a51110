package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/osfoundry/osfoundry/store"
)

// WatchPushOutbox exports the push outbox as WatchEmailOutbox does the email one.
func (m *Metrics) WatchPushOutbox(st *store.Store) {
	var (
		pending   = desc("push_outbox", "pending", "Pushes to owners' devices not yet sent, failed or skipped.")
		due       = desc("push_outbox", "due", "Pushes due now that no sender is sending.")
		oldestDue = desc("push_outbox", "oldest_due_seconds", "How long the most overdue of those has been due; growing means no sender runs or push services cannot be reached.")
		failed    = desc("push_outbox", "failed", "Pushes given up on (refused by the push service, or out of attempts), kept 7 days.")
	)
	m.reg.MustRegister(&collector{
		descs: []*prometheus.Desc{pending, due, oldestDue, failed},
		collect: func(ch chan<- prometheus.Metric) {
			ctx, cancel := context.WithTimeout(store.Background(context.Background()), outboxTimeout)
			defer cancel()
			if d, err := st.PushOutboxDepth(ctx); err == nil {
				ch <- prometheus.MustNewConstMetric(pending, prometheus.GaugeValue, float64(d.Pending))
				ch <- prometheus.MustNewConstMetric(due, prometheus.GaugeValue, float64(d.Due))
				ch <- prometheus.MustNewConstMetric(oldestDue, prometheus.GaugeValue, d.OldestDueAge.Seconds())
				ch <- prometheus.MustNewConstMetric(failed, prometheus.GaugeValue, float64(d.Failed))
			}
		},
	})
}
