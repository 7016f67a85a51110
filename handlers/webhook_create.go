package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// webhookCreate adds an endpoint; its page shows the signing secret once.
func (s *Server) webhookCreate(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	o := web.Owner(c)
	f := web.Form(c, "url", "kind", "fires")
	e, secret, err := s.store.CreateWebhookEndpointAs(c.Request().Context(), web.Actor(c), store.NewWebhookEndpoint{
		WorkspaceID: o.WorkspaceID, ProjectID: id, URL: f.Value("url"), Kind: f.Value("kind"), Fires: f.Value("fires"),
	})
	if err != nil {
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
		return s.renderWebhookList(c, http.StatusUnprocessableEntity, f)
	}
	s.log.Info("webhook endpoint added", "endpoint_id", e.ID, "project_id", id, "owner_id", o.ID, "kind", e.Kind, "fires", e.Fires)
	if err := web.StashReveal(c, webhookPath(id, e.ID), secret); err != nil {
		return err
	}
	return web.Redirect(c, webhookPath(id, e.ID))
}
