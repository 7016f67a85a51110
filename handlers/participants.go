package handlers

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

func (s *Server) participantsPage(c echo.Context) error {
	return s.renderParticipants(c, http.StatusOK, views.Form{})
}

func (s *Server) renderParticipants(c echo.Context, status int, invite views.Form) error {
	session, p, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	v := views.ParticipantsView{Session: *session, Project: *p, Invite: invite}
	if v.Participants, err = s.store.ListParticipants(ctx, session.WorkspaceID, session.ID); err != nil {
		return err
	}
	if v.Invitable, err = s.store.ListInvitableConnections(ctx, session.WorkspaceID, session.ID); err != nil {
		return err
	}
	s.page(c).Nav = "projects"
	return s.render(c, status, "Participants · "+session.Title, views.ParticipantsPage(v))
}

func participantsURL(id int64) string { return fmt.Sprintf("/sessions/%d/participants", id) }

func (s *Server) invite(c echo.Context) error {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	f := formOf(c, "connection_id", "role")
	err = s.store.Invite(c.Request().Context(), session.WorkspaceID, session.ID, int64Param(f.Value("connection_id")), f.Value("role"))
	if errors.Is(err, store.ErrNotFound) {
		err = &store.FieldError{Field: "connection_id", Message: "choose a live connection of this workspace"}
	}
	if err != nil {
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
		return s.renderParticipants(c, http.StatusUnprocessableEntity, f)
	}
	return redirect(c, participantsURL(session.ID))
}

// invitationOf reads the session and the invited connection an invitation's
// route names.
func (s *Server) invitationOf(c echo.Context) (*store.Session, int64, error) {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return nil, 0, err
	}
	conn, err := paramID(c, "conn")
	if err != nil {
		return nil, 0, err
	}
	return session, conn, nil
}

func (s *Server) inviteUpdate(c echo.Context) error {
	session, conn, err := s.invitationOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.store.InvitationRole(ctx, session.WorkspaceID, session.ID, conn); err != nil {
		return err
	}
	if err := s.store.Invite(ctx, session.WorkspaceID, session.ID, conn, c.FormValue("role")); err != nil {
		errs, err := fieldErrors(err)
		if err != nil {
			return err
		}
		return s.renderParticipants(c, http.StatusUnprocessableEntity, views.Form{Errors: errs})
	}
	return redirect(c, participantsURL(session.ID))
}

func (s *Server) inviteRemove(c echo.Context) error {
	session, conn, err := s.invitationOf(c)
	if err != nil {
		return err
	}
	if err := s.store.RemoveInvitation(c.Request().Context(), session.WorkspaceID, session.ID, conn); err != nil {
		return err
	}
	return redirect(c, participantsURL(session.ID))
}
