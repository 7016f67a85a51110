package handlers

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// participantList shows who is invited, and the form that invites another.
func (s *Server) participantList(c echo.Context) error {
	return s.renderParticipantList(c, http.StatusOK, views.Form{})
}

func (s *Server) renderParticipantList(c echo.Context, status int, invite views.Form) error {
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
	web.Page(c).Nav = "projects"
	return web.Render(c, status, "Participants · "+session.Title, views.ParticipantsPage(v))
}

// participantsURL is the participants page of a session.
func participantsURL(id int64) string { return fmt.Sprintf("/sessions/%d/participants", id) }
