package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// personRemove is POST /people/:id/remove: the person's sign-ins end on
// every replica, their connections are revoked, their notes stay with
// their name. The last admin cannot be removed (422).
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
