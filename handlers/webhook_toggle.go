package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// webhookEnable is POST /projects/:id/webhooks/:hook/enable.
func (s *Server) webhookEnable(c echo.Context) error { return s.setWebhookEnabled(c, true) }

// webhookDisable is POST /projects/:id/webhooks/:hook/disable.
func (s *Server) webhookDisable(c echo.Context) error { return s.setWebhookEnabled(c, false) }

func (s *Server) setWebhookEnabled(c echo.Context, enabled bool) error {
	projectID, hook, err := webhookParams(c)
	if err != nil {
		return err
	}
	o := web.Owner(c)
	if err := s.store.SetWebhookEndpointEnabled(c.Request().Context(), o.WorkspaceID, projectID, hook, enabled); err != nil {
		return err
	}
	s.log.Info("webhook endpoint switched", "endpoint_id", hook, "enabled", enabled, "owner_id", o.ID)
	return web.Redirect(c, webhookPath(projectID, hook))
}
