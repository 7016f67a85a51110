package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/metrics/metricstest"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestMetricsOfARealServer scrapes the operations listener of the real
// server after a tool call, a refused call, a note and an unchanged poll,
// and checks each series' value: tool calls by outcome, HTTP requests by
// route, the statements (none for the poll), the pool, the note hub and
// its lag, the outbox.
func TestMetricsOfARealServer(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	ops := freePort(t)
	r := startReplica(t, dsn, "", "--ops-addr", ops)
	r.waitReady()
	w := newWorld(t, dsn, r.URL, 1)

	if res, err := callTool(r.URL, w.tokens[0], "set_status", map[string]any{"task": "Measuring"}); err != nil || res.isError || res.status != http.StatusOK {
		t.Fatalf("set_status: %v %+v", err, res)
	}
	if res, err := callTool(r.URL, "not-a-token", "set_status", map[string]any{"task": "Refused"}); err != nil || res.status != http.StatusUnauthorized {
		t.Fatalf("set_status with a bad token: %v %+v", err, res)
	}
	posted, err := callTool(r.URL, w.tokens[0], "post_session_note", w.note("Metrics", "A note to hear of", "metrics-1"))
	if err != nil || posted.isError {
		t.Fatalf("post_session_note: %v %+v", err, posted)
	}

	// The owner signs in and opens the session page (the hub starts
	// tracking the session), then polls with nothing new.
	owner := newOwnerBrowser(t, r.URL, w)
	owner.signIn()
	get := func(u string) (int, string) {
		t.Helper()
		res, err := owner.c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := get(fmt.Sprintf("%s/sessions/%d", r.URL, w.session.ID)); code != http.StatusOK {
		t.Fatalf("session page: %d", code)
	}
	before := metricstest.Get(t, "http://"+ops+"/metrics")
	if code, body := get(fmt.Sprintf("%s/sessions/%d/mail/poll?after=%d", r.URL, w.session.ID, int64(posted.data["id"].(float64)))); code != http.StatusNoContent {
		t.Fatalf("unchanged poll: %d %s", code, body)
	}

	// The lag is observed when the hub hears the note: wait for it (bounded).
	s := metricstest.Get(t, "http://"+ops+"/metrics")
	for i := 0; i < 50 && s.Value("osfoundry_note_hub_lag_seconds") < 1; i++ {
		time.Sleep(100 * time.Millisecond)
		s = metricstest.Get(t, "http://"+ops+"/metrics")
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"osfoundry_mcp_tool_call_duration_seconds", []string{"tool", "set_status", "outcome", "ok"}, 1},
		{"osfoundry_mcp_tool_call_duration_seconds", []string{"tool", "set_status", "outcome", "refused"}, 1},
		{"osfoundry_mcp_tool_call_duration_seconds", []string{"tool", "set_status", "outcome", "is_error"}, 0},
		{"osfoundry_mcp_tool_call_duration_seconds", []string{"tool", "set_status", "outcome", "error"}, 0},
		{"osfoundry_mcp_tool_call_duration_seconds", []string{"tool", "post_session_note", "outcome", "ok"}, 1},
		{"osfoundry_mcp_tool_call_duration_seconds", []string{"tool", "read_session_mail", "outcome", "ok"}, 0},
		{"osfoundry_http_request_duration_seconds", []string{"route", "mcp", "method", "POST", "status", "2xx"}, 2},
		{"osfoundry_http_request_duration_seconds", []string{"route", "mcp", "method", "POST", "status", "4xx"}, 1},
		{"osfoundry_http_request_duration_seconds", []string{"route", "session-mail-poll", "method", "GET", "status", "2xx"}, 1},
		{"osfoundry_http_request_duration_seconds", []string{"route", "session", "method", "GET", "status", "2xx"}, 1},
		{"osfoundry_http_request_duration_seconds", []string{"route", "login-submit", "method", "POST", "status", "3xx"}, 1},
		{"osfoundry_note_hub_listening", nil, 1},
		{"osfoundry_note_hub_tracked_sessions", nil, 1},
		{"osfoundry_note_hub_lag_seconds", nil, 1},
		{"osfoundry_db_pool_max_connections", nil, 24},
		{"osfoundry_webhook_outbox_pending", nil, 0},
		{"osfoundry_mail_outbox_pending", nil, 0},
		{"osfoundry_mail_outbox_failed", nil, 0},
		{"osfoundry_push_outbox_pending", nil, 0},
		{"osfoundry_push_outbox_failed", nil, 0},
		{"osfoundry_live_streams", nil, 0},
		{"osfoundry_password_hashes_total", []string{"outcome", "run"}, 1}, // the owner's sign-in
		{"osfoundry_password_hashes_total", []string{"outcome", "refused"}, 0},
	} {
		if got := s.Value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// The unchanged poll ran no statement; everything before it did.
	if b, a := before.Value("osfoundry_db_statements_total", "origin", "request"), s.Value("osfoundry_db_statements_total", "origin", "request"); b < 10 || a != b {
		t.Errorf("request statements: %v before the poll, %v after (want the same, and some)", b, a)
	}
	if s.Value("osfoundry_db_statements_total", "origin", "background") < 1 {
		t.Error("no background statement counted (the hub's LISTEN, the outbox read)")
	}
	for _, name := range []string{"osfoundry_db_pool_total_connections", "osfoundry_db_pool_acquires_total", "osfoundry_db_pool_acquire_duration_seconds_total"} {
		if s.Value(name) <= 0 {
			t.Errorf("%s = %v, want > 0", name, s.Value(name))
		}
	}
	for _, name := range []string{"osfoundry_db_pool_acquired_connections", "osfoundry_db_pool_idle_connections", "osfoundry_db_pool_empty_acquires_total",
		"osfoundry_db_pool_canceled_acquires_total", "osfoundry_webhook_outbox_due", "osfoundry_webhook_outbox_oldest_due_seconds",
		"osfoundry_mail_outbox_due", "osfoundry_mail_outbox_oldest_due_seconds", "osfoundry_push_outbox_due", "osfoundry_push_outbox_oldest_due_seconds",
		"go_goroutines", "process_resident_memory_bytes"} {
		if s.Value(name) < 0 {
			t.Errorf("%s missing", name)
		}
	}
	if res, err := http.Get("http://" + ops + "/debug/pprof/"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("profiles on the operations listener: %v %v", err, res)
	}
}

// TestOpsListenerIsLoopbackOnly: the operations listener refuses any
// address but loopback, before listening.
func TestOpsListenerIsLoopbackOnly(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:9100", ":9100", "192.0.2.1:9100", "[::]:9100", "example.com:9100", "no-port"} {
		if err := serveOps(addr, "localhost", metrics.New(), quiet); err == nil || !strings.Contains(err.Error(), "--ops-addr") {
			t.Errorf("serveOps(%q) = %v, want a refusal", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:9100", "[::1]:9100", "localhost:9100"} {
		if err := checkOpsAddr(addr); err != nil {
			t.Errorf("checkOpsAddr(%q) = %v", addr, err)
		}
	}
}

// TestOpsAddrFlags: --ops-addr and OSFOUNDRY_OPS_ADDR set the operations
// listener; the deprecated --pprof-addr and OSFOUNDRY_PPROF_ADDR still do,
// noted for a warning.
func TestOpsAddrFlags(t *testing.T) {
	t.Setenv("OSFOUNDRY_OPS_ADDR", "")
	t.Setenv("OSFOUNDRY_PPROF_ADDR", "")
	if c := parseConfig(t); c.opsAddr != "" {
		t.Fatalf("operations listener on by default: %q", c.opsAddr)
	}
	if c := parseConfig(t, "--ops-addr", "127.0.0.1:9100"); c.opsAddr != "127.0.0.1:9100" || len(c.deprecated) != 0 {
		t.Fatalf("--ops-addr: %+v", c)
	}
	if c := parseConfig(t, "--pprof-addr", "127.0.0.1:9101"); c.opsAddr != "127.0.0.1:9101" || !slices.Equal(c.deprecated, []string{"--pprof-addr"}) {
		t.Fatalf("--pprof-addr: %q %v", c.opsAddr, c.deprecated)
	}
	t.Setenv("OSFOUNDRY_PPROF_ADDR", "127.0.0.1:9102")
	if c := parseConfig(t); c.opsAddr != "127.0.0.1:9102" || !slices.Equal(c.deprecated, []string{"OSFOUNDRY_PPROF_ADDR"}) {
		t.Fatalf("OSFOUNDRY_PPROF_ADDR: %q %v", c.opsAddr, c.deprecated)
	}
	t.Setenv("OSFOUNDRY_OPS_ADDR", "127.0.0.1:9103")
	if c := parseConfig(t); c.opsAddr != "127.0.0.1:9103" || len(c.deprecated) != 0 {
		t.Fatalf("OSFOUNDRY_OPS_ADDR beside OSFOUNDRY_PPROF_ADDR: %q %v", c.opsAddr, c.deprecated)
	}
}

// TestOpsListenerChecksHostAndHidesTheCommandLine: the operations listener
// answers a foreign Host (DNS rebinding) with 421, and never serves the
// command line, which here holds the cookie key; serve warns that a secret
// was given there.
func TestOpsListenerChecksHostAndHidesTheCommandLine(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	ops := freePort(t)
	r := startReplica(t, dsn, "", "--ops-addr", ops, "--session-key", testSessionKey)
	r.waitReady()
	r.waitLog("--session-key was given on the command line")
	get := func(path, host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+ops+path, nil)
		if host != "" {
			req.Host = host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/goroutine?debug=1"} {
		if code, _ := get(path, "rebind.attacker.example"+ops[strings.LastIndexByte(ops, ':'):]); code != http.StatusMisdirectedRequest {
			t.Errorf("%s under a rebound name: %d, want 421", path, code)
		}
		if code, _ := get(path, ""); code != http.StatusOK {
			t.Errorf("%s on loopback: %d, want 200", path, code)
		}
	}
	code, body := get("/debug/pprof/cmdline", "")
	if code != http.StatusNotFound || strings.Contains(body, testSessionKey) {
		t.Fatalf("/debug/pprof/cmdline: %d, holds the key: %v", code, strings.Contains(body, testSessionKey))
	}
}
