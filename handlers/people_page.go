package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

func (s *Server) peoplePage(c echo.Context) error {
	return s.renderPeople(c, http.StatusOK, views.PeopleView{})
}

// renderPeople renders the People page around v, loading the lists.
func (s *Server) renderPeople(c echo.Context, status int, v views.PeopleView) error {
	ctx := c.Request().Context()
	var err error
	if v.People, err = s.store.ListPeople(ctx, web.Actor(c)); err != nil {
		return err
	}
	if v.Invites, err = s.store.ListPersonInvites(ctx, web.Actor(c)); err != nil {
		return err
	}
	web.Page(c).Nav = "people"
	return web.Render(c, status, "People", views.PeoplePage(v))
}
