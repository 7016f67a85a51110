package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/views"
)

// projectRename is POST /projects/:id/rename.
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
		return s.renderProjectDetail(c, http.StatusUnprocessableEntity, views.ProjectView{Rename: f})
	}
	return redirect(c, "/projects/"+strconv.FormatInt(id, 10))
}
