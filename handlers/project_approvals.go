package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// approvalSettingFields are the form's number fields, in the order they show.
var approvalSettingFields = []string{"wait_seconds", "delay_minutes"}

// projectApprovals is POST /projects/:id/approvals: whether the project's
// permission prompts come to the owners, how long the hook waits for a
// decision, and how long an approval waits on the page before webhooks
// and email.
func (s *Server) projectApprovals(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	f := formOf(c, append(approvalSettingFields, "enabled")...)
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
	for field, msg := range formErrors(a.Validate()) {
		field = strings.TrimPrefix(field, "approval_")
		if !f.Errors.Has(field) {
			f.Errors[field] = msg
		}
	}
	if len(f.Errors) == 0 {
		err = s.store.SetProjectApprovalSettings(c.Request().Context(), currentOwner(c).WorkspaceID, id, a)
		if err == nil {
			return redirect(c, "/projects/"+strconv.FormatInt(id, 10)+"#approvals-settings-h")
		}
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
	}
	return s.renderProjectDetail(c, http.StatusUnprocessableEntity, views.ProjectView{ApprovalsForm: f})
}
