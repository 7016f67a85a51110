package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/views"
)

func (s *Server) home(c echo.Context) error {
	o := currentOwner(c)
	projects, err := s.store.ListProjects(c.Request().Context(), o.WorkspaceID)
	if err != nil {
		return err
	}
	s.page(c).Nav = "projects"
	return s.render(c, http.StatusOK, "Projects", views.HomePage(projects))
}
