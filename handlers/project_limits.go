package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// limitFields are the form's fields, in the order they show.
var limitFields = []string{"write_per_minute", "write_burst"}

// projectLimits saves how much each agent may write to the project.
func (s *Server) projectLimits(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	f := web.Form(c, limitFields...)
	var l store.WriteLimits
	f.Errors = views.FormErrors{}
	for i, dst := range []*int{&l.PerMinute, &l.Burst} {
		field := limitFields[i]
		n, err := strconv.Atoi(strings.TrimSpace(f.Value(field)))
		if err != nil {
			f.Errors[field] = "enter a whole number"
			continue
		}
		*dst = n
	}
	for field, msg := range web.FormErrors(l.Validate()) {
		if !f.Errors.Has(field) {
			f.Errors[field] = msg
		}
	}
	if len(f.Errors) == 0 {
		err = s.store.SetProjectWriteLimits(c.Request().Context(), web.Owner(c).WorkspaceID, id, l)
		if err == nil {
			return web.Redirect(c, "/projects/"+strconv.FormatInt(id, 10)+"#limits-h")
		}
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
	}
	return s.renderProjectDetail(c, http.StatusUnprocessableEntity, views.ProjectView{LimitsForm: f})
}
