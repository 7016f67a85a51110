package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// JoinPath is where an invitation link opens, before its token.
const JoinPath = "/join/"

// personInvite invites an email with a role. The link is shown once and
// mailed when email is on; a failed mail is logged, the link still works.
func (s *Server) personInvite(c echo.Context) error {
	f := web.Form(c, "email", "role")
	inv, token, err := s.store.CreatePersonInvite(c.Request().Context(), web.Actor(c), f.Value("email"), store.Role(f.Value("role")))
	if err != nil {
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
		return s.renderPeople(c, http.StatusUnprocessableEntity, views.PeopleView{Invite: f})
	}
	link := s.cfg.BaseURL + JoinPath + token
	mailed := false
	if s.sendInvite != nil {
		if err := s.sendInvite(c.Request().Context(), inv, link); err != nil {
			s.log.Warn("invitation not mailed; the link is shown to copy", "invite_id", inv.ID, "err", err)
		} else {
			mailed = true
		}
	}
	s.log.Info("person invited", "invite_id", inv.ID, "role", inv.Role, "owner_id", web.Owner(c).ID)
	return s.renderPeople(c, http.StatusOK, views.PeopleView{Link: link, Emailed: mailed})
}
