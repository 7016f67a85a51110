package handlers

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// signInEnd ends one of the owner's sign-ins on every replica.
func (s *Server) signInEnd(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return store.ErrNotFound
	}
	if si := web.SignIn(c); si.ID == id {
		return s.logout(c)
	}
	o := web.Owner(c)
	if err := s.store.EndSignIn(c.Request().Context(), web.Actor(c), id); err != nil {
		return err
	}
	s.sessions.ForgetSignIn(id)
	s.log.Info("sign-in ended", "owner_id", o.ID, "sign_in_id", id)
	return web.Redirect(c, "/account?done=signed-out")
}
