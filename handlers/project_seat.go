package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/views"
)

// projectSeat is POST /projects/:id/seats: seats the agent that claimed a handle.
func (s *Server) projectSeat(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	f := formOf(c, "handle")
	err = s.store.SeatAgentByHandleAs(c.Request().Context(), actor(c), id, f.Value("handle"))
	if err != nil {
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
		return s.renderProjectDetail(c, http.StatusUnprocessableEntity, views.ProjectView{Seat: f})
	}
	return redirect(c, "/projects/"+strconv.FormatInt(id, 10))
}
