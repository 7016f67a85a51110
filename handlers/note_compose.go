package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// noteCompose opens the reply composer, inline for htmx; it warns at once when
// the agent is revoked.
func (s *Server) noteCompose(c echo.Context) error {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	n, warn, err := s.replyTarget(c, session, web.Int64(c.QueryParam("reply_to")))
	if err != nil {
		return err
	}
	comp := views.Composer{SessionID: session.ID, ReplyTo: n, Form: views.Form{Values: map[string]string{"subject": views.ReplySubject(n.Subject)}, Errors: warn}}
	if web.IsHTMX(c) {
		return web.Render(c, http.StatusOK, "", views.ComposerForm(comp))
	}
	return web.Render(c, http.StatusOK, "Reply to "+n.SenderName, views.ComposePage(comp))
}
