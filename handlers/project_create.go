package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// projectCreate is POST /projects: a project of the workspace, then its page.
func (s *Server) projectCreate(c echo.Context) error {
	f := formOf(c, "name")
	p, err := s.store.CreateProjectAs(c.Request().Context(), actor(c), f.Value("name"))
	if err != nil {
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
		return s.renderProjectList(c, http.StatusUnprocessableEntity, f)
	}
	return redirect(c, "/projects/"+strconv.FormatInt(p.ID, 10))
}
