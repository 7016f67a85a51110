package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// logout is POST /logout: signs the owner out; their live streams end.
func (s *Server) logout(c echo.Context) error {
	if err := s.sessions.SignOut(c); err != nil {
		return err
	}
	return web.Redirect(c, "/login")
}
