package handlers

import "github.com/labstack/echo/v4"

// unreadStream is the owner's live unread counts (text/event-stream) for
// the projects list and a project's session list: an unread event
// ({"total": n, "projects": {"<id>": n}, "sessions": {"<id>": n}}, sessions
// with unread notes only) on connect and whenever the counts change (a note
// posted in the workspace, a read mark moved on any replica); heartbeats
// sign-out and replaced as the session stream.
func (s *Server) unreadStream(c echo.Context) error {
	o := currentOwner(c)
	ctx := c.Request().Context()
	st := s.live.NewStream(o, 0, streamClient(c), "")
	if err := s.live.Subscribe(st, 0, 0); err != nil {
		return streamsDown(err)
	}
	defer s.live.Unsubscribe(st)
	ev, err := s.live.UnreadEvent(ctx, o.WorkspaceID, o.ID)
	if err != nil {
		return err
	}
	s.live.FirstUnread(st, ev)
	w, err := openStream(c)
	if err != nil {
		return nil
	}
	s.pump(ctx, w, st, 0)
	return nil
}
