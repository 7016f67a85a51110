package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestOwnerPagesPastThePageLimitsAreRefusedNotErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "refused" || r.URL.Path == "/inbox" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	fx := &fixture{search: &searchFixture{owner: srv.Client()}}
	sf := &scaleFixture{measured: scaleMeasured{owner: srv.Client()}}
	for name, err := range map[string]error{
		"search":      fx.searchOnce(srv.URL + "/search?q=refused"),
		"scale inbox": sf.get(srv.URL+"/inbox", http.StatusOK),
	} {
		if !isRefused(err) {
			t.Errorf("%s answering 429: %v, want refused", name, err)
		}
	}
	for name, err := range map[string]error{
		"search":       fx.searchOnce(srv.URL + "/search?q=failing"),
		"scale search": sf.get(srv.URL+"/search?q=failing", http.StatusOK),
	} {
		if err == nil || isRefused(err) {
			t.Errorf("%s answering 500: %v, want an error", name, err)
		}
	}
}
