package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Route is one line of the routing table, as the HTTP series name it.
type Route struct {
	Name   string
	Method string
	Path   string
}

// unmatchedRoute labels unrouted requests, with method "other", so a client
// cannot add series.
const unmatchedRoute = "unmatched"

// Routes observes the HTTP requests of one routing table.
type Routes struct {
	http      *prometheus.HistogramVec
	by        map[routeKey]*routeSeries
	unmatched *routeSeries
}

type routeKey struct{ method, path string }

// routeSeries holds a route's series by status class, resolved on first use.
type routeSeries struct {
	route, method string
	class         [6]atomic.Value // prometheus.Observer
}

// Routes indexes the routing table for Observe.
func (m *Metrics) Routes(table []Route) *Routes {
	r := &Routes{http: m.http, by: make(map[routeKey]*routeSeries, len(table)),
		unmatched: &routeSeries{route: unmatchedRoute, method: "other"}}
	for _, rt := range table {
		r.by[routeKey{rt.Method, rt.Path}] = &routeSeries{route: rt.Name, method: rt.Method}
	}
	return r
}

var statusClasses = [6]string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"}

// Observe records a request by method, matched route path ("" for none) and status.
func (r *Routes) Observe(method, path string, status int, d time.Duration) {
	s, ok := r.by[routeKey{method, path}]
	if !ok {
		s = r.unmatched
	}
	c := status / 100
	if c < 1 || c > 5 {
		c = 0
	}
	o, _ := s.class[c].Load().(prometheus.Observer)
	if o == nil {
		o = r.http.WithLabelValues(s.route, s.method, statusClasses[c])
		s.class[c].Store(o)
	}
	o.Observe(d.Seconds())
}
