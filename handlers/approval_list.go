package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// approvalPageSize bounds the approvals a list shows.
const approvalPageSize = 20

// approvalsView is a session's approvals, or with session 0 the workspace's
// pending ones.
func (s *Server) approvalsView(c echo.Context, session int64) (views.ApprovalsView, error) {
	o := web.Owner(c)
	v := views.ApprovalsView{Session: session}
	var err error
	if session != 0 {
		v.Approvals, err = s.store.SessionApprovals(c.Request().Context(), o.WorkspaceID, session, approvalPageSize)
	} else {
		v.Approvals, err = s.store.PendingApprovals(c.Request().Context(), o.WorkspaceID, 0, approvalPageSize)
	}
	return v, err
}

// approvalList is the list the page polls; 204 while it matches ?v=.
func (s *Server) approvalList(c echo.Context) error {
	session := web.Int64(c.QueryParam("session"))
	if session != 0 {
		if _, err := s.store.GetSession(c.Request().Context(), web.Owner(c).WorkspaceID, session); err != nil {
			return err
		}
	}
	v, err := s.approvalsView(c, session)
	if err != nil {
		return err
	}
	if web.IsHTMX(c) && c.QueryParam("v") == v.Version() {
		return web.NoContent(c)
	}
	return web.Render(c, http.StatusOK, "Approvals", views.Approvals(v))
}
