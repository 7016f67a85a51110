package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/views"
)

// webhooksPage is GET /projects/:id/webhooks: the project's endpoints and
// the form that adds one.
func (s *Server) webhooksPage(c echo.Context) error {
	return s.renderWebhooks(c, http.StatusOK, views.Form{})
}

// renderWebhooks shows the Webhooks page with add's values and errors.
func (s *Server) renderWebhooks(c echo.Context, status int, add views.Form) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	o := currentOwner(c)
	p, err := s.store.GetProject(ctx, o.WorkspaceID, id)
	if err != nil {
		return err
	}
	endpoints, err := s.store.ListWebhookEndpoints(ctx, o.WorkspaceID, id)
	if err != nil {
		return err
	}
	s.page(c).Nav = "projects"
	return s.render(c, status, "Webhooks · "+p.Name, views.WebhooksPage(views.WebhooksView{Project: *p, Endpoints: endpoints, Add: add}))
}
