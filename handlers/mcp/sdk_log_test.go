package mcp_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/osfoundry/osfoundry/handlers/mcp"
	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// lockedBuffer is a log's output, written from the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSDKSessionLinesAreDebug: the SDK's lines of each session connecting
// and disconnecting are debug lines, not the operator's info
// log; with debug on they are still there.
func TestSDKSessionLinesAreDebug(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var out lockedBuffer
		log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: level}))
		e := &env{t: t, ctx: context.Background(), st: storetest.New(t), m: metrics.New()}
		var h http.Handler
		e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
		t.Cleanup(e.srv.Close)
		e.base = e.srv.URL
		e.h = mcp.New(mcp.Options{Store: e.st, BaseURL: e.base, Metrics: e.m, Logger: log})
		h = e.h
		ws, owner := e.workspace("W")
		a := e.agent(ws, owner, store.AllScopes)
		a.call("list_sessions", map[string]any{})
		a.cs.Close()
		got := out.String()
		for _, line := range []string{"server session connected", "server session disconnected"} {
			if has := strings.Contains(got, line); has != (level == slog.LevelDebug) {
				t.Errorf("log at %v: %q present %v\n%s", level, line, has, got)
			}
		}
	}
}
