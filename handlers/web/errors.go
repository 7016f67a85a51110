package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// statusOf maps a handler's error to a status and a message safe to show.
func statusOf(err error) (int, string) {
	var he *echo.HTTPError
	var re *store.RoleError
	switch {
	case errors.As(err, &he):
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && he.Code < 500 {
			msg = m
		}
		return he.Code, msg
	case errors.As(err, &re):
		return http.StatusForbidden, re.Error()
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound, "Page not found"
	case errors.Is(err, store.ErrForbidden):
		return http.StatusForbidden, "You are not allowed to do that"
	case errors.Is(err, store.ErrBusy):
		return http.StatusServiceUnavailable, "The server is busy checking other passwords. Try again in a moment."
	case store.IsUnavailable(err) || errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "The database is unavailable. Try again in a moment."
	default:
		return http.StatusInternalServerError, "Something went wrong on our side"
	}
}

// ErrorHandler is the one place errors become responses, logged by status class.
func ErrorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		if errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil {
			// The client went away: nobody reads an answer, and nothing failed here.
			log.Debug("request abandoned by the client", "method", c.Request().Method, "path", c.Request().URL.Path)
			return
		}
		status, msg := statusOf(err)
		rid := c.Response().Header().Get(echo.HeaderXRequestID)
		level := slog.LevelDebug
		if status >= 500 {
			level = slog.LevelError
		} else if status != http.StatusNotFound && status != http.StatusUnauthorized {
			level = slog.LevelInfo
		}
		log.Log(c.Request().Context(), level, "request failed", "status", status, "method", c.Request().Method,
			"path", c.Request().URL.Path, "request_id", rid, "err", err)
		if status == http.StatusServiceUnavailable {
			c.Response().Header().Set("Retry-After", "5")
		}
		var rerr error
		if IsHTMX(c) {
			rerr = Render(c, status, "", views.ErrorFragment(status, msg))
		} else {
			rerr = Render(c, status, msg, views.ErrorPage(status, msg))
		}
		if rerr != nil {
			_ = c.String(status, msg)
		}
	}
}

// Recover turns a panic into a logged 500.
func Recover(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			defer func() {
				if r := recover(); r != nil {
					if r == http.ErrAbortHandler {
						panic(r)
					}
					log.Error("panic", "path", c.Request().URL.Path, "panic", r, "stack", string(debug.Stack()))
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return next(c)
		}
	}
}

// LogRequests writes one line per request and observes it in routes.
func LogRequests(log *slog.Logger, routes *metrics.Routes) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			req := c.Request()
			took := time.Since(start)
			routes.Observe(req.Method, c.Path(), c.Response().Status, took)
			log.LogAttrs(req.Context(), slog.LevelInfo, "request",
				slog.String("method", req.Method),
				slog.String("path", req.URL.Path),
				slog.Int("status", c.Response().Status),
				slog.Duration("duration", took),
				slog.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)))
			return nil
		}
	}
}
