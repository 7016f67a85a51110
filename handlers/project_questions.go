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

// questionSettingFields are the form's fields, in the order they show.
var questionSettingFields = []string{"blocking_minutes", "normal_minutes", "expiry_hours"}

// projectQuestions saves how long questions wait before webhooks and email,
// and when they expire.
func (s *Server) projectQuestions(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	f := web.Form(c, questionSettingFields...)
	var q store.QuestionSettings
	f.Errors = views.FormErrors{}
	for i, dst := range []*int{&q.BlockingMinutes, &q.NormalMinutes, &q.ExpiryHours} {
		field := questionSettingFields[i]
		n, err := strconv.Atoi(strings.TrimSpace(f.Value(field)))
		if err != nil {
			f.Errors[field] = "enter a whole number"
			continue
		}
		*dst = n
	}
	// The bounds of the fields that are numbers, beside the ones that are not.
	for field, msg := range web.FormErrors(q.Validate()) {
		if !f.Errors.Has(field) {
			f.Errors[field] = msg
		}
	}
	if len(f.Errors) == 0 {
		err = s.store.SetProjectQuestionSettingsAs(c.Request().Context(), web.Actor(c), id, q)
		if err == nil {
			return web.Redirect(c, "/projects/"+strconv.FormatInt(id, 10)+"#questions-h")
		}
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
	}
	return s.renderProjectDetail(c, http.StatusUnprocessableEntity, views.ProjectView{QuestionsForm: f})
}
