package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// projectList shows the projects with their unread counts.
func (s *Server) projectList(c echo.Context) error {
	return s.renderProjectList(c, http.StatusOK, views.Form{})
}

// renderProjectList shows the projects page with create's values and errors.
func (s *Server) renderProjectList(c echo.Context, status int, create views.Form) error {
	o := web.Owner(c)
	projects, err := s.store.ListProjectSummaries(c.Request().Context(), o.WorkspaceID, o.ID)
	if err != nil {
		return err
	}
	p := web.Page(c)
	p.Nav = "projects"
	for _, pr := range projects {
		p.Unread += pr.Unread
	}
	return web.Render(c, status, "Projects", views.ProjectsPage(projects, create, views.FirstSteps{ServerURL: s.cfg.BaseURL, Osfoundry: osfoundryCommand()}))
}
