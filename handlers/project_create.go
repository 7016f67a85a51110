package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// projectCreate is POST /projects: a project of the workspace, then its page.
func (s *Server) projectCreate(c echo.Context) error {
	f := web.Form(c, "name")
	p, err := s.store.CreateProjectAs(c.Request().Context(), web.Actor(c), f.Value("name"))
	if err != nil {
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
		return s.renderProjectList(c, http.StatusUnprocessableEntity, f)
	}
	return web.Redirect(c, "/projects/"+strconv.FormatInt(p.ID, 10))
}
