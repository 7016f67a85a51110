package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// inviteCreate invites a connection to the session.
func (s *Server) inviteCreate(c echo.Context) error {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	f := web.Form(c, "connection_id", "role")
	err = s.store.InviteAs(c.Request().Context(), web.Actor(c), session.ID, web.Int64(f.Value("connection_id")), f.Value("role"))
	if errors.Is(err, store.ErrNotFound) {
		err = &store.FieldError{Field: "connection_id", Message: "choose a live connection of this workspace"}
	}
	if err != nil {
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
		return s.renderParticipantList(c, http.StatusUnprocessableEntity, f)
	}
	return web.Redirect(c, participantsURL(session.ID))
}
