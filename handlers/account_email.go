package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// accountEmail is POST /account/email: what the owner wants emailed, each a
// checkbox (questions, replies to them, the daily digest of unread agents'
// notes); an unticked box turns its email off.
func (s *Server) accountEmail(c echo.Context) error {
	on := func(name string) bool { return c.FormValue(name) == "on" }
	m := store.EmailSettings{Questions: on("questions"), Replies: on("replies"), Digest: on("digest")}
	if err := s.store.SetEmailSettingsAs(c.Request().Context(), web.Actor(c), m); err != nil {
		return err
	}
	return web.Redirect(c, "/account?done=mail")
}
