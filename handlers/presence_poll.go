package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// presencePoll returns the sidebar, or 204 while it matches ?v=.
func (s *Server) presencePoll(c echo.Context) error {
	session, p, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	v, err := s.presenceView(c, session, p)
	if err != nil {
		return err
	}
	if c.QueryParam("v") == v.Version {
		return web.NoContent(c)
	}
	return web.Render(c, http.StatusOK, "", views.PresenceSidebar(v))
}
