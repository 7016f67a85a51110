package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/live"
)

// streamWriteTimeout cuts off a client that stops reading. It replaces the
// server's WriteTimeout, which would end every stream.
const streamWriteTimeout = 30 * time.Second

// streamRetry is the "retry:" field, in milliseconds.
const streamRetry = 1000

// Stream writes server-sent events (live.Frame), each flushed within its own deadline.
type Stream struct {
	w  *echo.Response
	rc *http.ResponseController
}

// OpenStream answers with an unbuffered text/event-stream (X-Accel-Buffering:
// no, for nginx and the proxies that follow it).
func OpenStream(c echo.Context) (*Stream, error) {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w := &Stream{w: c.Response(), rc: http.NewResponseController(c.Response())}
	if err := w.rc.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	if err := w.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil {
		return nil, err
	}
	c.Response().WriteHeader(http.StatusOK)
	return w, w.Write([]byte("retry: " + strconv.Itoa(streamRetry) + "\n\n"))
}

// Write sends b and flushes it, within streamWriteTimeout.
func (w *Stream) Write(b []byte) error {
	if err := w.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil {
		return err
	}
	if _, err := w.w.Write(b); err != nil {
		return err
	}
	return w.rc.Flush()
}

// Pump writes st's events until either side ends; sent is the newest note sent.
func (w *Stream) Pump(ctx context.Context, st *live.Stream, sent int64) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.Done():
			switch {
			case st.SignedOut():
				_ = w.Write(live.Frame("signout", 0, nil))
			case st.Replaced():
				_ = w.Write(live.Frame("replaced", 0, nil))
			}
			return
		case ev := <-st.Events():
			if ev.NoteID > 0 {
				if ev.NoteID <= sent {
					continue
				}
				sent = ev.NoteID
			}
			if err := w.Write(ev.Data); err != nil {
				return
			}
		}
	}
}

// StreamClient is who opens a stream: the request's sign-in and address.
func StreamClient(c echo.Context) live.Client {
	return live.Client{SignIn: SignIn(c).ID, Addr: c.RealIP()}
}

// errLiveDown refuses a stream while the listener is down; the page polls.
var errLiveDown = echo.NewHTTPError(http.StatusServiceUnavailable, "Live updates are unavailable for a moment; the page checks for new notes every few seconds instead.")

var errTooManyStreams = echo.NewHTTPError(http.StatusTooManyRequests, "Too many live pages are open from your address. Close some tabs; this page checks for new notes every few seconds meanwhile.")

// StreamsDown answers live.ErrDown with 503 and live.ErrTooMany with 429.
func StreamsDown(err error) error {
	switch {
	case errors.Is(err, live.ErrDown):
		return errLiveDown
	case errors.Is(err, live.ErrTooMany):
		return errTooManyStreams
	}
	return err
}
