package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// webhookRetry puts a failed delivery back in the outbox, due now.
func (s *Server) webhookRetry(c echo.Context) error {
	projectID, hook, err := webhookParams(c)
	if err != nil {
		return err
	}
	delivery, err := web.ParamID(c, "delivery")
	if err != nil {
		return err
	}
	if err := s.store.RetryWebhookDeliveryAs(c.Request().Context(), web.Actor(c), projectID, hook, delivery); err != nil {
		return err
	}
	return web.Redirect(c, webhookPath(projectID, hook)+"#delivery-log")
}
