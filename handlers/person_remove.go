package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// personRemove ends the person's sign-ins and revokes their connections; their
// notes stay. The last admin cannot be removed.
func (s *Server) personRemove(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	err = s.store.RemovePerson(c.Request().Context(), web.Actor(c), id)
	if fes := store.FieldErrorsOf(err); fes != nil {
		return s.renderPeople(c, http.StatusUnprocessableEntity, views.PeopleView{Error: fes[0].Message})
	}
	if err != nil {
		return err
	}
	s.sessions.ForgetOwner(id)
	if id == web.Owner(c).ID {
		return web.Redirect(c, "/login")
	}
	return web.Redirect(c, "/people")
}
