package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// approvalDecide allows or denies an approval; the first decision wins and a
// later one gets 409. The service worker asks for JSON.
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
