package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

func (s *Server) webhookList(c echo.Context) error {
	return s.renderWebhookList(c, http.StatusOK, views.Form{})
}

// renderWebhookList shows the Webhooks page with add's values and errors.
func (s *Server) renderWebhookList(c echo.Context, status int, add views.Form) error {
	p, err := s.projectParam(c)
	if err != nil {
		return err
	}
	endpoints, err := s.store.ListWebhookEndpoints(c.Request().Context(), web.Owner(c).WorkspaceID, p.ID)
	if err != nil {
		return err
	}
	web.Page(c).Nav = "projects"
	return web.Render(c, status, "Webhooks · "+p.Name, views.WebhooksPage(views.WebhooksView{Project: *p, Endpoints: endpoints, Add: add}))
}
