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

// TestLiveStreamsGauge: osfoundry_live_streams counts the session and
// unread streams this replica holds, and forgets a stream that ended.
func TestLiveStreamsGauge(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	gauge := func() float64 {
		rec := httptest.NewRecorder()
		f.app.h.metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return metricstest.Parse(t, rec.Body).Value("osfoundry_live_streams")
	}
	if n := gauge(); n != 0 {
		t.Fatalf("%v streams before any opened", n)
	}
	page := f.alice.openEvents(f.url + "/stream")
	f.alice.openEvents("/unread/stream")
	f.app.waitStreams(f.session.ID, 1)
	f.app.waitStreams(0, 1)
	if n := gauge(); n != 2 {
		t.Fatalf("%v streams with a session and an unread stream open, want 2", n)
	}
	page.close()
	f.app.waitStreams(f.session.ID, 0)
	if n := gauge(); n != 1 {
		t.Fatalf("%v streams after one closed, want 1", n)
	}
}
