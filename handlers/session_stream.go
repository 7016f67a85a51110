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

// sessionStream is the session page's live stream (events in docs/live.md). On
// connect it replays the notes after Last-Event-ID or ?after=, whichever is newer.
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

// streamCursor is the larger of Last-Event-ID and ?after=; false when neither.
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

// replayMail sends the notes after after, oldest first, or one reload event
// past live.MaxReplay; it returns the newest id sent.
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

// mailReloadURL is the newest page of rows, which a reload event names.
func mailReloadURL(sessionID int64) string {
	return "/sessions/" + strconv.FormatInt(sessionID, 10) + "/mail/older?before=0"
}
