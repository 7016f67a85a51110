package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

func (s *Server) projectsPage(c echo.Context) error {
	return s.renderProjects(c, http.StatusOK, views.Form{})
}

func (s *Server) renderProjects(c echo.Context, status int, create views.Form) error {
	o := currentOwner(c)
	projects, err := s.store.ListProjectSummaries(c.Request().Context(), o.WorkspaceID, o.ID)
	if err != nil {
		return err
	}
	p := s.page(c)
	p.Nav = "projects"
	for _, pr := range projects {
		p.Unread += pr.Unread
	}
	return s.render(c, status, "Projects", views.ProjectsPage(projects, create))
}

func (s *Server) projectCreate(c echo.Context) error {
	o := currentOwner(c)
	f := formOf(c, "name")
	p, err := s.store.CreateProject(c.Request().Context(), o.WorkspaceID, f.Value("name"))
	if err != nil {
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
		return s.renderProjects(c, http.StatusUnprocessableEntity, f)
	}
	return redirect(c, "/projects/"+strconv.FormatInt(p.ID, 10))
}

func (s *Server) projectPage(c echo.Context) error {
	return s.renderProject(c, http.StatusOK, views.ProjectView{})
}

// renderProject shows the project page with v's forms (values and errors).
func (s *Server) renderProject(c echo.Context, status int, v views.ProjectView) error {
	p, err := s.projectParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	o := currentOwner(c)
	v.Project = *p
	if v.Agents, err = s.store.ListSeatedAgents(ctx, o.WorkspaceID, p.ID); err != nil {
		return err
	}
	if v.Sessions, err = s.store.ListSessionSummaries(ctx, o.WorkspaceID, p.ID, o.ID); err != nil {
		return err
	}
	page := s.page(c)
	page.Nav = "projects"
	for _, summary := range v.Sessions {
		page.Unread += summary.Unread
	}
	return s.render(c, status, p.Name, views.ProjectPage(v))
}

func (s *Server) projectRename(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	f := formOf(c, "name")
	_, err = s.store.RenameProject(c.Request().Context(), currentOwner(c).WorkspaceID, id, f.Value("name"))
	if err != nil {
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
		return s.renderProject(c, http.StatusUnprocessableEntity, views.ProjectView{Rename: f})
	}
	return redirect(c, "/projects/"+strconv.FormatInt(id, 10))
}

func (s *Server) projectSeat(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	f := formOf(c, "handle")
	err = s.store.SeatAgentByHandle(c.Request().Context(), currentOwner(c).WorkspaceID, id, f.Value("handle"))
	if err != nil {
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
		return s.renderProject(c, http.StatusUnprocessableEntity, views.ProjectView{Seat: f})
	}
	return redirect(c, "/projects/"+strconv.FormatInt(id, 10))
}

func (s *Server) projectUnseat(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	conn, err := paramID(c, "conn")
	if err != nil {
		return err
	}
	if err := s.store.UnseatConnection(c.Request().Context(), currentOwner(c).WorkspaceID, id, conn); err != nil {
		return err
	}
	return redirect(c, "/projects/"+strconv.FormatInt(id, 10))
}

func (s *Server) sessionCreate(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	o := currentOwner(c)
	f := formOf(c, "session_type", "title")
	session, err := s.store.CreateSession(c.Request().Context(), store.NewSession{
		WorkspaceID: o.WorkspaceID, ProjectID: id, Type: f.Value("session_type"), Title: f.Value("title"), CreatedBy: o.ID,
	})
	if err != nil {
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
		return s.renderProject(c, http.StatusUnprocessableEntity, views.ProjectView{Create: f})
	}
	return redirect(c, "/sessions/"+strconv.FormatInt(session.ID, 10))
}
