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

// approvalSettingFields are the form's number fields, in the order they show.
var approvalSettingFields = []string{"wait_seconds", "delay_minutes"}

// projectApprovals saves the project's approval settings.
func (s *Server) projectApprovals(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	f := web.Form(c, append(approvalSettingFields, "enabled")...)
	a := store.ApprovalSettings{Enabled: f.Value("enabled") == "on"}
	f.Errors = views.FormErrors{}
	for i, dst := range []*int{&a.WaitSeconds, &a.DelayMinutes} {
		field := approvalSettingFields[i]
		n, err := strconv.Atoi(strings.TrimSpace(f.Value(field)))
		if err != nil {
			f.Errors[field] = "enter a whole number"
			continue
		}
		*dst = n
	}
	for field, msg := range web.FormErrors(a.Validate()) {
		field = strings.TrimPrefix(field, "approval_")
		if !f.Errors.Has(field) {
			f.Errors[field] = msg
		}
	}
	if len(f.Errors) == 0 {
		err = s.store.SetProjectApprovalSettings(c.Request().Context(), web.Owner(c).WorkspaceID, id, a)
		if err == nil {
			return web.Redirect(c, "/projects/"+strconv.FormatInt(id, 10)+"#approvals-settings-h")
		}
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
	}
	return s.renderProjectDetail(c, http.StatusUnprocessableEntity, views.ProjectView{ApprovalsForm: f})
}
