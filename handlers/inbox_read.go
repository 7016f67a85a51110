package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// inboxRead marks every session of the workspace (or project) read.
func (s *Server) inboxRead(c echo.Context) error {
	o := web.Owner(c)
	project := web.Int64(c.FormValue("project"))
	if _, err := s.store.MarkAllRead(c.Request().Context(), o.WorkspaceID, o.ID, project); err != nil {
		return err
	}
	target := "/inbox"
	if q := views.InboxQuery(store.InboxFilter{ProjectID: project}); len(q) > 0 {
		target += "?" + q.Encode()
	}
	return web.Redirect(c, target)
}
