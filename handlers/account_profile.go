package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// accountProfile saves the name and email; a new email needs the password,
// under the password change's throttle.
func (s *Server) accountProfile(c echo.Context) error {
	ctx := c.Request().Context()
	o := web.Owner(c)
	f := web.Form(c, "display_name", "email")
	in := store.OwnerProfile{DisplayName: f.Value("display_name"), Email: f.Value("email"), Password: c.FormValue("password")}
	addr := c.RealIP()
	emailChange := store.NormalizeEmail(in.Email) != o.Email
	if emailChange {
		try, err := s.store.ReserveAttempt(ctx, store.ActionPassword, addr, store.AttemptKey{Email: o.Email, FreeTries: web.PasswordFreeTries})
		if err != nil {
			return err
		}
		if !try.Allowed {
			f.Errors = views.FormErrors{"form": web.RefuseAttempt(c, try)}
			return s.renderAccountPage(c, http.StatusTooManyRequests, views.AccountData{Profile: f})
		}
	}
	updated, err := s.store.UpdateOwnerProfile(ctx, o.ID, in)
	if errors.Is(err, store.ErrInvalid) {
		if f.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
		return s.renderAccountPage(c, http.StatusUnprocessableEntity, views.AccountData{Profile: f})
	}
	if err != nil {
		return err
	}
	if emailChange {
		if err := s.store.AttemptSucceeded(ctx, store.ActionPassword, addr, o.Email); err != nil {
			return err
		}
	}
	s.sessions.ForgetOwner(o.ID)
	s.log.Info("owner profile changed", "owner_id", o.ID, "email_changed", updated.Email != o.Email)
	return web.Redirect(c, "/account?done=profile")
}
