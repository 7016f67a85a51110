package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// unreadStream streams the owner's unread counts (docs/live.md).
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
