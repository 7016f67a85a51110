package handlers

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/osfoundry/osfoundry/live"
)

// Server-sent events: the writer every live stream uses (the framing is
// live.Frame).

// streamWriteTimeout bounds one write of a stream (an event or a
// heartbeat): a client that stops reading is cut off after it. It is longer
// than the heartbeat interval, so an idle stream never hits it, and it
// replaces the server's WriteTimeout, which would end every stream.
const streamWriteTimeout = 30 * time.Second

// streamRetry is the reconnection delay the browser is told to use after a
// stream ends (the "retry:" field), in milliseconds.
const streamRetry = 1000

// sseWriter writes a stream's events, each flushed at once, each with its
// own write deadline.
type sseWriter struct {
	w  *echo.Response
	rc *http.ResponseController
}

// openStream answers a request with a text/event-stream that nothing
// buffers: no caching, no proxy buffering (X-Accel-Buffering: no, for
// nginx and the proxies that follow it), every event flushed. The server's
// ReadTimeout and WriteTimeout would end the stream; its deadlines are
// managed here instead (the request has no body to read).
func openStream(c echo.Context) (*sseWriter, error) {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w := &sseWriter{w: c.Response(), rc: http.NewResponseController(c.Response())}
	if err := w.rc.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	if err := w.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil {
		return nil, err
	}
	c.Response().WriteHeader(http.StatusOK)
	return w, w.write([]byte("retry: " + strconv.Itoa(streamRetry) + "\n\n"))
}

// write sends b and flushes it, within streamWriteTimeout.
func (w *sseWriter) write(b []byte) error {
	if err := w.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil {
		return err
	}
	if _, err := w.w.Write(b); err != nil {
		return err
	}
	return w.rc.Flush()
}

// pump writes the stream's events until the client leaves or the broker
// closes the stream; sent is the newest note id already sent.
func (s *Server) pump(ctx context.Context, w *sseWriter, st *live.Stream, sent int64) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.Done():
			switch {
			case st.SignedOut():
				_ = w.write(live.Frame("signout", 0, nil))
			case st.Replaced():
				_ = w.write(live.Frame("replaced", 0, nil))
			}
			return
		case ev := <-st.Events():
			if ev.NoteID > 0 {
				if ev.NoteID <= sent {
					continue
				}
				sent = ev.NoteID
			}
			if err := w.write(ev.Data); err != nil {
				return
			}
		}
	}
}
