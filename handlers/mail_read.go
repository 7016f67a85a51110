package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// mailRead records that the owner has seen the session's notes up to
// ?upto= (clamped to the newest note): the page says so when rows arrive
// over its stream while it is visible, or when it is shown again.
func (s *Server) mailRead(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	o := web.Owner(c)
	ctx := c.Request().Context()
	latest, sure := s.mail.NewestNote(o.WorkspaceID, id)
	if !sure {
		// Also the workspace check: another workspace's session is a 404.
		if latest, err = s.mail.Follow(ctx, o.WorkspaceID, id); err != nil {
			return err
		}
	}
	if _, err := s.store.MarkMailRead(ctx, o.ID, id, min(web.Int64(c.FormValue("upto")), latest)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
