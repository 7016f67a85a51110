package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// accountEmail saves which emails the owner gets; an unticked box turns one off.
func (s *Server) accountEmail(c echo.Context) error {
	on := func(name string) bool { return c.FormValue(name) == "on" }
	m := store.EmailSettings{Questions: on("questions"), Replies: on("replies"), Digest: on("digest")}
	if err := s.store.SetEmailSettingsAs(c.Request().Context(), web.Actor(c), m); err != nil {
		return err
	}
	return web.Redirect(c, "/account?done=mail")
}
