package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/osfoundry/osfoundry/metrics/metricstest"
)

// TestRequestMetrics: each request is counted under its route's name,
// method and status class; a path or method no route has under
// "unmatched" and "other", whatever the client sent.
func TestRequestMetrics(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c := a.client()
	c.get("/healthz")
	c.get("/healthz")
	c.get("/login")
	c.get("/no-such-page")
	req, _ := http.NewRequest("PURGE", a.srv.URL+"/no-such-page", nil)
	c.do(req)
	req, _ = http.NewRequest(http.MethodPut, a.srv.URL+"/login", nil)
	c.do(req)

	rec := httptest.NewRecorder()
	a.h.metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	got := metricstest.Parse(t, rec.Body)
	const name = "osfoundry_http_request_duration_seconds"
	for _, w := range []struct {
		route, method, status string
		want                  float64
	}{
		{"healthz", "GET", "2xx", 2},
		{"login", "GET", "3xx", 1}, // no owner yet: to /setup
		{"unmatched", "other", "4xx", 3},
		{"login-submit", "POST", "2xx", -1}, // never requested: no series
	} {
		if v := got.Value(name, "route", w.route, "method", w.method, "status", w.status); v != w.want {
			t.Errorf("%s{route=%q,method=%q,status=%q} = %v, want %v", name, w.route, w.method, w.status, v, w.want)
		}
	}
}
