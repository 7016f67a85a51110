package web

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestAbandonedRequestIsNotAnError: a handler error caused by the client
// going away (its request context canceled) is neither logged as an error
// nor answered; the same error on a live request still is a 500.
func TestAbandonedRequestIsNotAnError(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	handleError := ErrorHandler(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	e := echo.New()
	err := fmt.Errorf("store: get session: %w", context.Canceled)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	handleError(err, e.NewContext(httptest.NewRequest(http.MethodGet, "/sessions/1/presence", nil).WithContext(ctx), rec))
	if strings.Contains(logs.String(), "level=ERROR") || rec.Body.Len() != 0 {
		t.Fatalf("abandoned request: logged %q, answered %d %q", logs.String(), rec.Code, rec.Body.String())
	}

	logs.Reset()
	rec = httptest.NewRecorder()
	handleError(err, e.NewContext(httptest.NewRequest(http.MethodGet, "/sessions/1/presence", nil), rec))
	if !strings.Contains(logs.String(), "level=ERROR") || rec.Code != http.StatusInternalServerError {
		t.Fatalf("live request: logged %q, answered %d", logs.String(), rec.Code)
	}
}
