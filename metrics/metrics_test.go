package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/metrics/metricstest"
)

// TestObservationsAllocateNothing: recording a tool call, a request or a
// note's lag on the request path allocates nothing once the series exist.
// (Not parallel: testing.AllocsPerRun refuses to run in a parallel test.)
func TestObservationsAllocateNothing(t *testing.T) {
	m := metrics.New()
	tools := m.Tools("set_status")
	routes := m.Routes([]metrics.Route{{Name: "mcp", Method: http.MethodPost, Path: "/mcp"}})
	routes.Observe(http.MethodPost, "/mcp", 200, time.Millisecond) // resolves the 2xx series
	for name, f := range map[string]func(){
		"tool":      func() { tools.Observe("set_status", metrics.OK, time.Millisecond) },
		"unknown":   func() { tools.Observe("no_such_tool", metrics.Failed, time.Millisecond) },
		"route":     func() { routes.Observe(http.MethodPost, "/mcp", 200, time.Millisecond) },
		"unmatched": func() { routes.Observe("PURGE", "", 404, time.Millisecond) },
		"lag":       func() { m.ObserveHubLag(time.Millisecond) },
	} {
		f() // the first observation of a route's status class resolves its series
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations per observation", name, n)
		}
	}
}

// TestSeries: what is observed shows under the documented names and labels;
// status classes are resolved as they occur; the live streams gauge reads
// its hook.
func TestSeries(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	tools := m.Tools("set_status", "read_session_mail")
	tools.Observe("set_status", metrics.Refused, time.Millisecond)
	tools.Observe("set_status", metrics.Refused, time.Millisecond)
	tools.Observe("read_session_mail", metrics.IsError, time.Millisecond)
	routes := m.Routes([]metrics.Route{{Name: "session", Method: http.MethodGet, Path: "/sessions/:id"}})
	routes.Observe(http.MethodGet, "/sessions/:id", 200, time.Millisecond)
	routes.Observe(http.MethodGet, "/sessions/:id", 503, time.Millisecond)
	routes.Observe(http.MethodPost, "/sessions/:id", 405, time.Millisecond)
	m.ObserveHubLag(3 * time.Millisecond)
	open := 7
	m.CountStreams(func() int { return open })

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	s := metricstest.Parse(t, rec.Body)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"osfoundry_mcp_tool_call_duration_seconds", []string{"tool", "set_status", "outcome", "refused"}, 2},
		{"osfoundry_mcp_tool_call_duration_seconds", []string{"tool", "set_status", "outcome", "ok"}, 0},
		{"osfoundry_mcp_tool_call_duration_seconds", []string{"tool", "read_session_mail", "outcome", "is_error"}, 1},
		{"osfoundry_mcp_tool_call_duration_seconds", []string{"tool", "unknown", "outcome", "error"}, 0},
		{"osfoundry_http_request_duration_seconds", []string{"route", "session", "method", "GET", "status", "2xx"}, 1},
		{"osfoundry_http_request_duration_seconds", []string{"route", "session", "method", "GET", "status", "5xx"}, 1},
		{"osfoundry_http_request_duration_seconds", []string{"route", "session", "method", "GET", "status", "4xx"}, -1},
		{"osfoundry_http_request_duration_seconds", []string{"route", "unmatched", "method", "other", "status", "4xx"}, 1},
		{"osfoundry_note_hub_lag_seconds", nil, 1},
		{"osfoundry_live_streams", nil, 7},
	} {
		if got := s.Value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, name := range []string{"go_goroutines", "go_sched_latencies_seconds", "process_resident_memory_bytes"} {
		if s.Value(name) < 0 {
			t.Errorf("%s missing", name)
		}
	}
}
