package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

func (s *Server) inviteUpdate(c echo.Context) error {
	session, conn, err := s.invitationOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.store.InvitationRole(ctx, session.WorkspaceID, session.ID, conn); err != nil {
		return err
	}
	if err := s.store.InviteAs(ctx, web.Actor(c), session.ID, conn, c.FormValue("role")); err != nil {
		if errors.Is(err, store.ErrNotFound) { // invited, but no longer a live connection
			return echo.NewHTTPError(http.StatusConflict, "This agent's connection was revoked: its role stays as it is until it signs in again.")
		}
		errs, err := web.FieldErrors(err)
		if err != nil {
			return err
		}
		return s.renderParticipantList(c, http.StatusUnprocessableEntity, views.Form{Errors: errs})
	}
	return web.Redirect(c, participantsURL(session.ID))
}

// invitationOf reads the session and connection an invitation's route names.
func (s *Server) invitationOf(c echo.Context) (*store.Session, int64, error) {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return nil, 0, err
	}
	conn, err := web.ParamID(c, "conn")
	if err != nil {
		return nil, 0, err
	}
	return session, conn, nil
}
