package handlers

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// Server-sent events: the framing and the writer every live stream uses.

// streamWriteTimeout bounds one write of a stream (an event or a
// heartbeat): a client that stops reading is cut off after it. It is longer
// than the heartbeat interval, so an idle stream never hits it, and it
// replaces the server's WriteTimeout, which would end every stream.
const streamWriteTimeout = 30 * time.Second

// streamRetry is the reconnection delay the browser is told to use after a
// stream ends (the "retry:" field), in milliseconds.
const streamRetry = 1000

// heartbeat is the comment line sent on idle streams, so that proxies and
// load balancers do not close them and dead clients are noticed.
var heartbeat = []byte(": heartbeat\n\n")

// sseEvent frames one event. id (when not 0) becomes the browser's
// Last-Event-ID; only note events carry one. Every line of data becomes a
// "data:" line, so data may hold any text (a line break inside a note body
// comes back as "\n").
func sseEvent(name string, id int64, data []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(data) + 64)
	if id > 0 {
		b.WriteString("id: ")
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteByte('\n')
	}
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteByte('\n')
	text := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

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
func (s *Server) pump(ctx context.Context, w *sseWriter, st *stream, sent int64) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.done:
			if st.why == closeSignOut {
				_ = w.write(sseEvent("signout", 0, nil))
			}
			return
		case ev := <-st.events:
			if ev.noteID > 0 {
				if ev.noteID <= sent {
					continue
				}
				sent = ev.noteID
			}
			if err := w.write(ev.data); err != nil {
				return
			}
		}
	}
}
