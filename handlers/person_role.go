package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// personRole changes a role; the last admin cannot be demoted.
func (s *Server) personRole(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	err = s.store.SetRole(c.Request().Context(), web.Actor(c), id, store.Role(c.FormValue("role")))
	if fes := store.FieldErrorsOf(err); fes != nil {
		return s.renderPeople(c, http.StatusUnprocessableEntity, views.PeopleView{Error: fes[0].Message})
	}
	if err != nil {
		return err
	}
	s.sessions.ForgetOwner(id)
	return web.Redirect(c, "/people")
}
