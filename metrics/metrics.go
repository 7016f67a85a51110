// Package metrics defines every Prometheus series (docs/operations.md); the
// request path's series are resolved once, so an observation allocates nothing.
package metrics

import (
	"net/http"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every osFoundry series.
const Namespace = "osfoundry"

// latencyBuckets span a cached answer to one stuck behind database timeouts.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// lagBuckets span a notification heard at once to a listener far behind.
var lagBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// Metrics is one process's registry and request-path series.
type Metrics struct {
	reg     *prometheus.Registry
	tools   *prometheus.HistogramVec
	http    *prometheus.HistogramVec
	hubLag  prometheus.Histogram
	streams atomic.Pointer[func() int]
	agents  atomic.Pointer[func() int]
}

// New returns the series plus Go's runtime and process ones, on their own registry.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.tools = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "mcp", Name: "tool_call_duration_seconds",
		Help:    "MCP tool calls by tool and outcome (ok, is_error, refused, error) and how long the server took to answer them.",
		Buckets: latencyBuckets,
	}, []string{"tool", "outcome"})
	m.http = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "http", Name: "request_duration_seconds",
		Help:    "HTTP requests by route name, method and status class, and how long they took.",
		Buckets: latencyBuckets,
	}, []string{"route", "method", "status"})
	m.hubLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "note_hub", Name: "lag_seconds",
		Help:    "Time from just before a note's transaction committed to this replica's note hub hearing of it.",
		Buckets: lagBuckets,
	})
	m.reg.MustRegister(m.tools, m.http, m.hubLag,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "live", Name: "streams",
			Help: "Live event streams open on this replica.",
		}, func() float64 {
			if f := m.streams.Load(); f != nil {
				return float64((*f)())
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "live", Name: "agent_streams",
			Help: "Agents' relay streams (GET /agent/events) open on this replica.",
		}, func() float64 {
			if f := m.agents.Load(); f != nil {
				return float64((*f)())
			}
			return 0
		}),
		// Goroutines' scheduling latency (go_sched_latencies_seconds): how
		// long a runnable goroutine waited for a CPU, a tail's first suspect
		// on a busy machine.
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/sched/latencies:seconds$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Handler serves the series; one that cannot be read is left out, not the rest.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// CountStreams sets what osfoundry_live_streams reads at each scrape.
func (m *Metrics) CountStreams(open func() int) { m.streams.Store(&open) }

// CountAgentStreams sets what osfoundry_live_agent_streams reads at each scrape.
func (m *Metrics) CountAgentStreams(open func() int) { m.agents.Store(&open) }

// ObserveHubLag records one note notification's lag (WatchListener).
func (m *Metrics) ObserveHubLag(d time.Duration) { m.hubLag.Observe(d.Seconds()) }
