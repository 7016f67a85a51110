package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

func (s *Server) inviteRemove(c echo.Context) error {
	session, conn, err := s.invitationOf(c)
	if err != nil {
		return err
	}
	if err := s.store.RemoveInvitationAs(c.Request().Context(), web.Actor(c), session.ID, conn); err != nil {
		return err
	}
	return web.Redirect(c, participantsURL(session.ID))
}
