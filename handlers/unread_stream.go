package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// unreadStream is the owner's live unread counts (text/event-stream) for
// the projects list and a project's session list: an unread event
// ({"total": n, "projects": {"<id>": n}, "sessions": {"<id>": n}}, sessions
// with unread notes only) on connect and whenever the counts change (a note
// posted in the workspace, a read mark moved on any replica); heartbeats
// sign-out and replaced as the session stream.
func (s *Server) unreadStream(c echo.Context) error {
	o := web.Owner(c)
	ctx := c.Request().Context()
	st := s.live.NewStream(o, 0, web.StreamClient(c), "")
	if err := s.live.Subscribe(st, 0, 0); err != nil {
		return web.StreamsDown(err)
	}
	defer s.live.Unsubscribe(st)
	ev, err := s.live.UnreadEvent(ctx, o.WorkspaceID, o.ID)
	if err != nil {
		return err
	}
	s.live.FirstUnread(st, ev)
	w, err := web.OpenStream(c)
	if err != nil {
		return nil
	}
	w.Pump(ctx, st, 0)
	return nil
}
