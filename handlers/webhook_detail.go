package handlers

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// webhookPath is the page of an endpoint.
func webhookPath(projectID, hook int64) string {
	return fmt.Sprintf("/projects/%d/webhooks/%d", projectID, hook)
}

// webhookDetail shows an endpoint, its log, and its secret once after creation.
func (s *Server) webhookDetail(c echo.Context) error {
	projectID, hook, err := webhookParams(c)
	if err != nil {
		return err
	}
	var secret string
	if _, err := web.TakeReveal(c, webhookPath(projectID, hook), &secret); err != nil {
		return err
	}
	return s.renderWebhookDetail(c, http.StatusOK, projectID, hook, secret, nil)
}

func (s *Server) renderWebhookDetail(c echo.Context, status int, projectID, hook int64, secret string, errs views.FormErrors) error {
	v, err := s.webhookView(c, projectID, hook)
	if err != nil {
		return err
	}
	v.Secret, v.Errors = secret, errs
	web.Page(c).Nav = "projects"
	return web.Render(c, status, "Webhook · "+v.Project.Name, views.WebhookPage(*v))
}

// webhookView loads an endpoint and its log, in the owner's workspace only.
func (s *Server) webhookView(c echo.Context, projectID, hook int64) (*views.WebhookView, error) {
	ctx := c.Request().Context()
	o := web.Owner(c)
	p, err := s.store.GetProject(ctx, o.WorkspaceID, projectID)
	if err != nil {
		return nil, err
	}
	e, err := s.store.GetWebhookEndpoint(ctx, o.WorkspaceID, projectID, hook)
	if err != nil {
		return nil, err
	}
	log, err := s.store.ListWebhookDeliveries(ctx, o.WorkspaceID, projectID, hook)
	if err != nil {
		return nil, err
	}
	v := &views.WebhookView{Project: *p, Endpoint: *e, Log: log}
	if err := s.targets.Unreachable(ctx, e.URL); err != nil {
		v.Unreachable = err.Error()
	}
	return v, nil
}

// webhookParams reads the project and endpoint of a webhook route.
func webhookParams(c echo.Context) (projectID, endpointID int64, err error) {
	if projectID, err = web.ParamID(c, "id"); err != nil {
		return 0, 0, err
	}
	endpointID, err = web.ParamID(c, "hook")
	return projectID, endpointID, err
}
