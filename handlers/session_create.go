package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

func (s *Server) sessionCreate(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	o := web.Owner(c)
	f := web.Form(c, "session_type", "title")
	session, err := s.store.CreateSessionAs(c.Request().Context(), web.Actor(c), store.NewSession{
		WorkspaceID: o.WorkspaceID, ProjectID: id, Type: f.Value("session_type"), Title: f.Value("title"), CreatedBy: o.ID,
	})
	if err != nil {
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
		return s.renderProjectDetail(c, http.StatusUnprocessableEntity, views.ProjectView{Create: f})
	}
	return web.Redirect(c, "/sessions/"+strconv.FormatInt(session.ID, 10))
}
