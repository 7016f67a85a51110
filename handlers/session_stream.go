package handlers

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/live"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// sessionStream is the session page's live stream (text/event-stream), for
// a signed-in owner of the session's workspace (a 404 for anyone else, as
// the page). Its events:
//
//   - note: one Team mail row as the page renders it; its id is the note id.
//   - presence: the presence sidebar, when it would look different from the
//     version the page shows (?v=, then what the stream sent).
//   - receipt: a read mark on an owner's note: the note's receipts line
//     (<div id="receipts-<note id>" hx-swap-oob="outerHTML">…</div>), which
//     replaces the one on the page. It carries no id.
//   - reload: more notes were missed than a reconnect replays; the data is
//     the URL of the newest page of rows, the id the newest note id.
//   - unread: the owner's unread counts, as the unread stream sends them
//     (the navigation's inbox count follows them), first on connect.
//   - signout: the sign-in ended (on any replica); the stream ends.
//   - replaced: newer streams of the sign-in or owner took its place
//     (live.Limits); the stream ends and the page polls instead.
//
// On connect it replays the notes after the newest of the Last-Event-ID
// header (the browser's own reconnect) and ?after= (the page's newest row,
// which the htmx extension's reconnects carry): at most live.MaxReplay of them,
// else one reload event. Without either it starts from now. A comment line
// every heartbeat (live.Options) keeps it open through proxies.
func (s *Server) sessionStream(c echo.Context) error {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	o := web.Owner(c)
	ctx := c.Request().Context()
	latest, err := s.mail.Follow(ctx, o.WorkspaceID, session.ID)
	if err != nil {
		return err
	}
	after, ok := streamCursor(c)
	if !ok {
		after = latest
	}
	st := s.live.NewStream(o, session.ID, web.StreamClient(c), c.QueryParam("v"))
	// Subscribed before the replay reads the database: a note committed
	// after that read is announced to this stream; one before, replayed.
	if err := s.live.Subscribe(st, session.ProjectID, latest); err != nil {
		return web.StreamsDown(err)
	}
	defer s.live.Unsubscribe(st)
	ev, err := s.live.UnreadEvent(ctx, o.WorkspaceID, o.ID)
	if err != nil {
		return err
	}
	w, err := web.OpenStream(c)
	if err != nil {
		return nil
	}
	sent, err := s.replayMail(ctx, w, o, session.ID, after)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("live: replay failed; the browser reconnects", "session_id", session.ID, "err", err)
		}
		return nil
	}
	s.live.FirstUnread(st, ev)
	w.Pump(ctx, st, sent)
	return nil
}

// streamCursor is the newest note a reconnecting stream has: the larger of
// the Last-Event-ID header and ?after=; ok is false when there is neither.
func streamCursor(c echo.Context) (int64, bool) {
	var after int64
	ok := false
	for _, v := range []string{c.Request().Header.Get("Last-Event-ID"), c.QueryParam("after")} {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 {
			after, ok = max(after, n), true
		}
	}
	return after, ok
}

// replayMail sends the notes newer than after, oldest first, or a reload
// event when there are more than live.MaxReplay. It returns the newest note id
// sent.
func (s *Server) replayMail(ctx context.Context, w *web.Stream, o *store.Owner, sessionID, after int64) (int64, error) {
	notes, err := s.store.SessionMailAfter(ctx, o.WorkspaceID, sessionID, after)
	if err != nil || len(notes) == 0 {
		return after, err
	}
	newest := notes[0].ID
	if len(notes) > live.MaxReplay {
		return newest, w.Write(live.Frame("reload", newest, []byte(mailReloadURL(sessionID))))
	}
	rows := mailRows(o, notes, 0, true)
	// A missed owner's note may have been read meanwhile.
	if rows, err = s.withReceipts(ctx, o, sessionID, rows); err != nil {
		return after, err
	}
	now := time.Now()
	for i := len(rows) - 1; i >= 0; i-- {
		html, err := web.Fragment(now, views.MailRows(sessionID, rows[i:i+1]))
		if err != nil {
			return after, err
		}
		if err := w.Write(live.Frame("note", rows[i].Note.ID, html)); err != nil {
			return after, err
		}
		after = rows[i].Note.ID
	}
	return newest, nil
}

// mailReloadURL is the newest page of a session's rows (and its "older"
// link), which a page told to reload its list fetches.
func mailReloadURL(sessionID int64) string {
	return "/sessions/" + strconv.FormatInt(sessionID, 10) + "/mail/older?before=0"
}
