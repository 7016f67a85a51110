package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/osfoundry/osfoundry/store"
)

// WatchEmailOutbox exports what waits, is overdue or failed in the email outbox.
func (m *Metrics) WatchEmailOutbox(st *store.Store) {
	var (
		pending   = desc("mail_outbox", "pending", "Mails to owners not yet sent, failed or skipped.")
		due       = desc("mail_outbox", "due", "Mails due now that no sender is sending.")
		oldestDue = desc("mail_outbox", "oldest_due_seconds", "How long the most overdue of those has been due; growing means no sender runs (is --smtp-url set on some replica?) or they cannot keep up.")
		failed    = desc("mail_outbox", "failed", "Mails given up on (refused by the SMTP server, or out of attempts), kept 7 days.")
	)
	m.reg.MustRegister(&collector{
		descs: []*prometheus.Desc{pending, due, oldestDue, failed},
		collect: func(ch chan<- prometheus.Metric) {
			ctx, cancel := context.WithTimeout(store.Background(context.Background()), outboxTimeout)
			defer cancel()
			if d, err := st.EmailOutboxDepth(ctx); err == nil {
				ch <- prometheus.MustNewConstMetric(pending, prometheus.GaugeValue, float64(d.Pending))
				ch <- prometheus.MustNewConstMetric(due, prometheus.GaugeValue, float64(d.Due))
				ch <- prometheus.MustNewConstMetric(oldestDue, prometheus.GaugeValue, d.OldestDueAge.Seconds())
				ch <- prometheus.MustNewConstMetric(failed, prometheus.GaugeValue, float64(d.Failed))
			}
		},
	})
}
