package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// personInviteRevoke is POST /people/invitations/:id/revoke.
func (s *Server) personInviteRevoke(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	if err := s.store.RevokePersonInvite(c.Request().Context(), web.Actor(c), id); err != nil {
		return err
	}
	return web.Redirect(c, "/people")
}
