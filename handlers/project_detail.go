package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// projectDetail shows the project's sessions and seated agents.
func (s *Server) projectDetail(c echo.Context) error {
	return s.renderProjectDetail(c, http.StatusOK, views.ProjectView{})
}

// renderProjectDetail shows the project page with v's forms (values and errors).
func (s *Server) renderProjectDetail(c echo.Context, status int, v views.ProjectView) error {
	p, err := s.projectParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	o := web.Owner(c)
	v.Project = *p
	if v.Agents, err = s.store.ListSeatedAgents(ctx, o.WorkspaceID, p.ID); err != nil {
		return err
	}
	v.Radar = radarOf(p.ID, v.Agents)
	if v.Questions, err = s.store.ProjectQuestionSettings(ctx, o.WorkspaceID, p.ID); err != nil {
		return err
	}
	if v.Approvals, err = s.store.ProjectApprovalSettings(ctx, o.WorkspaceID, p.ID); err != nil {
		return err
	}
	if v.Limits, err = s.store.ProjectWriteLimits(ctx, o.WorkspaceID, p.ID); err != nil {
		return err
	}
	if v.Sessions, err = s.store.ListSessionSummaries(ctx, o.WorkspaceID, p.ID, o.ID); err != nil {
		return err
	}
	page := web.Page(c)
	page.Nav = "projects"
	for _, summary := range v.Sessions {
		page.Unread += summary.Unread
	}
	return web.Render(c, status, p.Name, views.ProjectPage(v))
}

// projectParam loads the route's project, in the owner's workspace only.
func (s *Server) projectParam(c echo.Context) (*store.Project, error) {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return nil, err
	}
	return s.store.GetProject(c.Request().Context(), web.Owner(c).WorkspaceID, id)
}
