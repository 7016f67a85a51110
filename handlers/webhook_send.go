package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// webhookSendTest queues a test delivery.
func (s *Server) webhookSendTest(c echo.Context) error {
	projectID, hook, err := webhookParams(c)
	if err != nil {
		return err
	}
	err = s.store.QueueWebhookTestAs(c.Request().Context(), web.Actor(c), projectID, hook)
	if errors.Is(err, store.ErrWebhookDisabled) {
		return s.renderWebhookDetail(c, http.StatusUnprocessableEntity, projectID, hook, "", views.FormErrors{"endpoint": store.ErrWebhookDisabled.Message})
	}
	if err != nil {
		return err
	}
	return web.Redirect(c, webhookPath(projectID, hook))
}
