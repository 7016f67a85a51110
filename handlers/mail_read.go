package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// mailRead records the owner has seen the notes up to ?upto=.
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
