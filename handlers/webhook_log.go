package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// webhookLog is the delivery log the page polls while deliveries wait.
func (s *Server) webhookLog(c echo.Context) error {
	projectID, hook, err := webhookParams(c)
	if err != nil {
		return err
	}
	v, err := s.webhookView(c, projectID, hook)
	if err != nil {
		return err
	}
	return web.Render(c, http.StatusOK, "Delivery log", views.DeliveryLog(*v))
}
