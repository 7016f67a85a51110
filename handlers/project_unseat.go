package handlers

import (
	"strconv"

	"github.com/labstack/echo/v4"
)

// projectUnseat is POST /projects/:id/seats/:conn/remove.
func (s *Server) projectUnseat(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	conn, err := paramID(c, "conn")
	if err != nil {
		return err
	}
	if err := s.store.UnseatConnectionAs(c.Request().Context(), actor(c), id, conn); err != nil {
		return err
	}
	return redirect(c, "/projects/"+strconv.FormatInt(id, 10))
}
