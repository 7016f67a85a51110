package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// projectSeat is POST /projects/:id/seats: seats the agent that claimed a handle.
func (s *Server) projectSeat(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	f := web.Form(c, "handle")
	err = s.store.SeatAgentByHandleAs(c.Request().Context(), web.Actor(c), id, f.Value("handle"))
	if err != nil {
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
		return s.renderProjectDetail(c, http.StatusUnprocessableEntity, views.ProjectView{Seat: f})
	}
	return web.Redirect(c, "/projects/"+strconv.FormatInt(id, 10))
}
