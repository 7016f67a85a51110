package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// signInEndOthers ends every sign-in of the owner but this one.
func (s *Server) signInEndOthers(c echo.Context) error {
	o, si := web.Owner(c), web.SignIn(c)
	n, err := s.store.EndOtherSignIns(c.Request().Context(), web.Actor(c), si.ID)
	if err != nil {
		return err
	}
	s.sessions.ForgetOtherSignIns(o.ID, si.ID)
	s.log.Info("other sign-ins ended", "owner_id", o.ID, "ended", n)
	return web.Redirect(c, "/account?done=others")
}
