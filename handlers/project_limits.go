package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// limitFields are the form's fields, in the order they show.
var limitFields = []string{"write_per_minute", "write_burst"}

// projectLimits is POST /projects/:id/limits: how many notes, replies and
// questions each agent's connection may write to the project a minute, and
// at most at once.
func (s *Server) projectLimits(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	f := formOf(c, limitFields...)
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
	for field, msg := range formErrors(l.Validate()) {
		if !f.Errors.Has(field) {
			f.Errors[field] = msg
		}
	}
	if len(f.Errors) == 0 {
		err = s.store.SetProjectWriteLimits(c.Request().Context(), currentOwner(c).WorkspaceID, id, l)
		if err == nil {
			return redirect(c, "/projects/"+strconv.FormatInt(id, 10)+"#limits-h")
		}
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
	}
	return s.renderProjectDetail(c, http.StatusUnprocessableEntity, views.ProjectView{LimitsForm: f})
}
