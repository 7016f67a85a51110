package handlers

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/live"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// liveRender renders the live streams' events as the pages render them.
var liveRender = live.Render{
	Note: func(now time.Time, sessionID int64, n store.Note, own bool) ([]byte, error) {
		return renderFragment(now, views.MailRows(sessionID, []views.MailRow{views.NewMailRow(n, own, 0, true)}))
	},
	Receipts: func(now time.Time, noteID int64, receipts []store.Receipt) ([]byte, error) {
		return renderFragment(now, views.NoteReceipts(noteID, true, views.ReadBy(receipts)))
	},
	Presence: func(now time.Time, sessionID int64, p store.Project, agents []store.SeatedAgent) live.Sidebar {
		v := presenceOf(now, sessionID, p, agents)
		return live.Sidebar{Version: v.Version, HTML: func() ([]byte, error) { return renderFragment(now, views.PresenceSidebar(v)) }}
	},
}

// renderFragment renders a component outside any request, as of now.
func renderFragment(now time.Time, c templ.Component) ([]byte, error) {
	var buf bytes.Buffer
	err := c.Render(views.WithPage(context.Background(), &views.Page{Now: now}), &buf)
	return buf.Bytes(), err
}

// errLiveDown refuses a stream while the listener is down or the server
// stops: the page polls and its stream retries.
var errLiveDown = echo.NewHTTPError(http.StatusServiceUnavailable, "Live updates are unavailable for a moment; the page checks for new notes every few seconds instead.")

// errTooManyStreams refuses a stream from an address that holds as many as
// it may (live.Limits).
var errTooManyStreams = echo.NewHTTPError(http.StatusTooManyRequests, "Too many live pages are open from your address. Close some tabs; this page checks for new notes every few seconds meanwhile.")

// streamsDown answers live.ErrDown with errLiveDown and live.ErrTooMany
// with errTooManyStreams.
func streamsDown(err error) error {
	switch {
	case errors.Is(err, live.ErrDown):
		return errLiveDown
	case errors.Is(err, live.ErrTooMany):
		return errTooManyStreams
	}
	return err
}

// streamClient is who opens a stream: the request's sign-in and address.
func streamClient(c echo.Context) live.Client {
	return live.Client{SignIn: currentSignIn(c).ID, Addr: c.RealIP()}
}
