// Package metrics is what osFoundry tells Prometheus. Every series it exports
// is defined in this package: the ones observed on the request path (tool
// calls, HTTP requests, the note hub's lag) through label children resolved
// once, so that an observation allocates nothing; and the ones read at scrape
// time from the store, the note hub and the live streams. docs/operations.md
// explains each.
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

// latencyBuckets (seconds) cover a cached answer (under a millisecond) up to
// a request stuck behind the database's timeouts.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// lagBuckets (seconds) cover a notification heard at once on the same
// machine up to a listener that fell far behind.
var lagBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// Metrics holds the registry of one server process and the series observed
// on its request path. Build it with New, hand it to the handlers, and serve
// Handler on the operations listener.
type Metrics struct {
	reg     *prometheus.Registry
	tools   *prometheus.HistogramVec
	http    *prometheus.HistogramVec
	hubLag  prometheus.Histogram
	streams atomic.Pointer[func() int]
	agents  atomic.Pointer[func() int]
}

// New returns an empty set of osFoundry's series plus Go's runtime and
// process series, on a registry of its own.
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

// Handler serves the series in Prometheus' text format (and OpenMetrics or
// protobuf when a scraper asks). A series that cannot be read (the database
// is down) is left out; the others are still served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// CountStreams sets the function that says how many live event streams are
// open; osfoundry_live_streams reads it at each scrape (0 until it is set).
func (m *Metrics) CountStreams(open func() int) { m.streams.Store(&open) }

// CountAgentStreams sets the function that says how many agent relay
// streams are open; osfoundry_live_agent_streams reads it at each scrape.
func (m *Metrics) CountAgentStreams(open func() int) { m.agents.Store(&open) }

// ObserveHubLag records one note notification's lag (WatchListener).
func (m *Metrics) ObserveHubLag(d time.Duration) { m.hubLag.Observe(d.Seconds()) }
