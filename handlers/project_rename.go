package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// projectRename is POST /projects/:id/rename.
func (s *Server) projectRename(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	f := web.Form(c, "name")
	_, err = s.store.RenameProject(c.Request().Context(), web.Owner(c).WorkspaceID, id, f.Value("name"))
	if err != nil {
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
		return s.renderProjectDetail(c, http.StatusUnprocessableEntity, views.ProjectView{Rename: f})
	}
	return web.Redirect(c, "/projects/"+strconv.FormatInt(id, 10))
}
