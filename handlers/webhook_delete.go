package handlers

import (
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// webhookDelete removes an endpoint with its log and waiting deliveries.
func (s *Server) webhookDelete(c echo.Context) error {
	projectID, hook, err := webhookParams(c)
	if err != nil {
		return err
	}
	o := web.Owner(c)
	if err := s.store.DeleteWebhookEndpointAs(c.Request().Context(), web.Actor(c), projectID, hook); err != nil {
		return err
	}
	s.log.Info("webhook endpoint deleted", "endpoint_id", hook, "owner_id", o.ID)
	return web.Redirect(c, fmt.Sprintf("/projects/%d/webhooks", projectID))
}
