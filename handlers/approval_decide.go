package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// approvalDecide is POST /approvals/:id/decide: an owner allows
// (verdict=allow) or denies (verdict=deny, with an optional reason for the
// model) an approval of the workspace. The first decision wins
// (store.DecideApproval); a later one is refused with who decided (409).
// htmx gets the approval's box as it now stands; a page without script goes
// back to where the approval shows; the service worker (Accept:
// application/json, from a notification's Allow or Deny) gets the
// approval's state, who decided and the refusal as JSON.
func (s *Server) approvalDecide(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	o := web.Owner(c)
	ctx := c.Request().Context()
	in := store.Decision{WorkspaceID: o.WorkspaceID, OwnerID: o.ID, ApprovalID: id, Reason: c.FormValue("reason"), From: c.RealIP(), UserAgent: c.Request().UserAgent()}
	switch c.FormValue("verdict") {
	case "allow":
		in.Allow = true
	case "deny":
	default:
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "verdict: choose Allow or Deny.")
	}
	a, err := s.store.DecideApproval(ctx, in)
	status, notice := http.StatusOK, ""
	var closed *store.ErrApprovalClosed
	switch {
	case errors.As(err, &closed):
		a, status, notice = closed.Approval, http.StatusConflict, closed.Error()
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, "No such approval")
	case store.FieldErrorsOf(err) != nil:
		notice = store.FieldErrorsOf(err)[0].Message
		if a, err = s.store.OwnerApproval(ctx, o.WorkspaceID, id); err != nil {
			return err
		}
		status = http.StatusUnprocessableEntity
	case err != nil:
		return err
	}
	if c.Request().Header.Get("Accept") == "application/json" {
		return c.JSON(status, map[string]string{"state": a.State, "decided_by": a.DecidedBy, "notice": notice})
	}
	if !web.IsHTMX(c) && status == http.StatusOK {
		return web.Redirect(c, views.ApprovalHome(*a))
	}
	return web.Render(c, status, "Approval", views.ApprovalBox(*a, a.SessionID == nil, notice))
}
