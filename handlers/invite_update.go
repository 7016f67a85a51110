package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// inviteUpdate is POST /sessions/:id/invitations/:conn: changes an invited
// connection's role.
func (s *Server) inviteUpdate(c echo.Context) error {
	session, conn, err := s.invitationOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.store.InvitationRole(ctx, session.WorkspaceID, session.ID, conn); err != nil {
		return err
	}
	if err := s.store.InviteAs(ctx, actor(c), session.ID, conn, c.FormValue("role")); err != nil {
		if errors.Is(err, store.ErrNotFound) { // invited, but no longer a live connection
			return echo.NewHTTPError(http.StatusConflict, "This agent's connection was revoked: its role stays as it is until it signs in again.")
		}
		errs, err := fieldErrors(err)
		if err != nil {
			return err
		}
		return s.renderParticipantList(c, http.StatusUnprocessableEntity, views.Form{Errors: errs})
	}
	return redirect(c, participantsURL(session.ID))
}
