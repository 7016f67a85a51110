package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// joinForm is an invitation's page; an expired, used or revoked link says so.
func (s *Server) joinForm(c echo.Context) error {
	inv, err := s.store.PersonInviteOf(c.Request().Context(), c.Param("token"))
	if msg, bad := inviteRefusal(err); bad {
		return web.Render(c, http.StatusGone, "Invitation", views.JoinPage(views.JoinForm{Error: msg}))
	}
	if err != nil {
		return err
	}
	return web.Render(c, http.StatusOK, "Join "+inv.WorkspaceName, views.JoinPage(views.JoinForm{Invite: inv}))
}

// inviteRefusal is the sentence of a link that does not work.
func inviteRefusal(err error) (string, bool) {
	for _, e := range []error{store.ErrInviteInvalid, store.ErrInviteExpired, store.ErrInviteUsed, store.ErrInviteRevoked} {
		if errors.Is(err, e) {
			return capitalize(e.Error()) + ".", true
		}
	}
	return "", false
}

// joinSubmit creates the invited person and signs them in, throttled as
// sign-in is before the password is hashed.
func (s *Server) joinSubmit(c echo.Context) error {
	ctx := c.Request().Context()
	token := c.Param("token")
	inv, err := s.store.PersonInviteOf(ctx, token)
	if msg, bad := inviteRefusal(err); bad {
		return web.Render(c, http.StatusGone, "Invitation", views.JoinPage(views.JoinForm{Error: msg}))
	}
	if err != nil {
		return err
	}
	f := views.JoinForm{Invite: inv, DisplayName: c.FormValue("display_name")}
	addr := c.RealIP()
	try, err := s.store.ReserveAttempt(ctx, store.ActionSignIn, addr, web.SignInKeys(inv.Email)...)
	if err != nil {
		return err
	}
	if !try.Allowed {
		f.Errors = views.FormErrors{"form": web.RefuseAttempt(c, try)}
		return web.Render(c, http.StatusTooManyRequests, "Join "+inv.WorkspaceName, views.JoinPage(f))
	}
	o, err := s.store.AcceptPersonInvite(ctx, token, f.DisplayName, c.FormValue("password"),
		store.Actor{RemoteAddr: addr, UserAgent: c.Request().UserAgent()})
	if msg, bad := inviteRefusal(err); bad {
		return web.Render(c, http.StatusGone, "Invitation", views.JoinPage(views.JoinForm{Error: msg}))
	}
	if err != nil {
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
		return web.Render(c, http.StatusUnprocessableEntity, "Join "+inv.WorkspaceName, views.JoinPage(f))
	}
	if err := s.store.AttemptSucceeded(ctx, store.ActionSignIn, addr, inv.Email); err != nil {
		return err
	}
	if err := s.sessions.SignIn(c, o); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/")
}

// capitalize upper-cases the first letter of a sentence.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
