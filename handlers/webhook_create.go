package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// webhookCreate is POST /projects/:id/webhooks: it adds an endpoint and
// redirects to its page, which shows the signing secret the one time it is
// shown.
func (s *Server) webhookCreate(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	o := currentOwner(c)
	f := formOf(c, "url", "kind", "fires")
	e, secret, err := s.store.CreateWebhookEndpointAs(c.Request().Context(), actor(c), store.NewWebhookEndpoint{
		WorkspaceID: o.WorkspaceID, ProjectID: id, URL: f.Value("url"), Kind: f.Value("kind"), Fires: f.Value("fires"),
	})
	if err != nil {
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
		return s.renderWebhookList(c, http.StatusUnprocessableEntity, f)
	}
	s.log.Info("webhook endpoint added", "endpoint_id", e.ID, "project_id", id, "owner_id", o.ID, "kind", e.Kind, "fires", e.Fires)
	if err := s.stashReveal(c, webhookPath(id, e.ID), secret); err != nil {
		return err
	}
	return redirect(c, webhookPath(id, e.ID))
}
