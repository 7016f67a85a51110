package handlers

import "github.com/labstack/echo/v4"

// personInviteRevoke is POST /people/invitations/:id/revoke.
func (s *Server) personInviteRevoke(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	if err := s.store.RevokePersonInvite(c.Request().Context(), actor(c), id); err != nil {
		return err
	}
	return redirect(c, "/people")
}
