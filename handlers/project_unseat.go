package handlers

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// projectUnseat is POST /projects/:id/seats/:conn/remove.
func (s *Server) projectUnseat(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	conn, err := web.ParamID(c, "conn")
	if err != nil {
		return err
	}
	if err := s.store.UnseatConnectionAs(c.Request().Context(), web.Actor(c), id, conn); err != nil {
		return err
	}
	return web.Redirect(c, "/projects/"+strconv.FormatInt(id, 10))
}
