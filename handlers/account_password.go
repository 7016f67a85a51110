package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// accountPassword is POST /account/password: the owner's new password,
// given the current one (throttled as sign-in is: the check hashes). Every
// other sign-in of the owner ends; this one stays.
func (s *Server) accountPassword(c echo.Context) error {
	ctx := c.Request().Context()
	o, si := currentOwner(c), currentSignIn(c)
	addr := c.RealIP()
	try, err := s.store.ReserveAttempt(ctx, store.ActionPassword, addr, store.AttemptKey{Email: o.Email, FreeTries: passwordFreeTries})
	if err != nil {
		return err
	}
	if !try.Allowed {
		return s.renderAccount(c, http.StatusTooManyRequests, views.Form{Errors: views.FormErrors{"form": refuseAttempt(c, try)}}, "")
	}
	err = s.store.ChangePassword(ctx, o.ID, c.FormValue("current_password"), c.FormValue("new_password"), si.ID)
	if errors.Is(err, store.ErrInvalid) {
		errs := formErrors(err)
		if errs.Has("current_password") {
			errs["current_password"] += ". " + triesLeft(try)
		}
		return s.renderAccount(c, http.StatusUnprocessableEntity, views.Form{Errors: errs}, "")
	}
	if err != nil {
		return err
	}
	s.signIns.forgetOthers(o.ID, si.ID)
	if err := s.store.AttemptSucceeded(ctx, store.ActionPassword, addr, o.Email); err != nil {
		return err
	}
	s.log.Info("password changed", "owner_id", o.ID)
	return redirect(c, "/account?done=password")
}
