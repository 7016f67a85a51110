package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// accountPassword changes the password, throttled as sign-in is (the check
// hashes); every other sign-in of the owner ends.
func (s *Server) accountPassword(c echo.Context) error {
	ctx := c.Request().Context()
	o, si := web.Owner(c), web.SignIn(c)
	addr := c.RealIP()
	try, err := s.store.ReserveAttempt(ctx, store.ActionPassword, addr, store.AttemptKey{Email: o.Email, FreeTries: web.PasswordFreeTries})
	if err != nil {
		return err
	}
	if !try.Allowed {
		return s.renderAccount(c, http.StatusTooManyRequests, views.Form{Errors: views.FormErrors{"form": web.RefuseAttempt(c, try)}}, "")
	}
	err = s.store.ChangePassword(ctx, o.ID, c.FormValue("current_password"), c.FormValue("new_password"), si.ID)
	if errors.Is(err, store.ErrInvalid) {
		errs := web.FormErrors(err)
		if errs.Has("current_password") {
			errs["current_password"] += ". " + web.TriesLeft(try)
		}
		return s.renderAccount(c, http.StatusUnprocessableEntity, views.Form{Errors: errs}, "")
	}
	if err != nil {
		return err
	}
	s.sessions.ForgetOtherSignIns(o.ID, si.ID)
	if err := s.store.AttemptSucceeded(ctx, store.ActionPassword, addr, o.Email); err != nil {
		return err
	}
	s.log.Info("password changed", "owner_id", o.ID)
	return web.Redirect(c, "/account?done=password")
}
