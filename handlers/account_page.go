package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// accountNotices are what the account page says after a redirect (?done=).
var accountNotices = map[string]string{
	"password":       "Your password is changed. Your other sign-ins were signed out.",
	"signed-out":     "That sign-in was signed out.",
	"others":         "Every other sign-in was signed out.",
	"mail":           "Your mail settings are saved.",
	"push":           "Your notification settings are saved.",
	"device":         "This device is notified from now on.",
	"device-renamed": "The device is renamed.",
	"device-removed": "The device is removed: nothing more is pushed to it.",
	"profile":        "Your name and email are saved.",
}

func (s *Server) accountPage(c echo.Context) error {
	return s.renderAccount(c, http.StatusOK, views.Form{}, accountNotices[c.QueryParam("done")])
}

// renderAccount shows the account page with the password form as given.
func (s *Server) renderAccount(c echo.Context, status int, password views.Form, notice string) error {
	return s.renderAccountPage(c, status, views.AccountData{Password: password, Notice: notice})
}

// renderAccountPage shows the account page with d's forms, filling in the rest.
func (s *Server) renderAccountPage(c echo.Context, status int, d views.AccountData) error {
	o := web.Owner(c)
	signIns, err := s.store.ListSignIns(c.Request().Context(), o.ID)
	if err != nil {
		return err
	}
	mail, err := s.store.EmailSettingsOf(c.Request().Context(), o.ID)
	if err != nil {
		return err
	}
	pushSettings, err := s.store.PushSettingsOf(c.Request().Context(), o.ID)
	if err != nil {
		return err
	}
	devices, err := s.store.PushSubscriptions(c.Request().Context(), o.ID)
	if err != nil {
		return err
	}
	web.Page(c).Nav = "account"
	d.Owner, d.SignIns, d.Current, d.EmailSettings, d.EmailOn = o, signIns, web.SignIn(c).ID, mail, s.cfg.Email
	d.Push, d.Devices, d.VAPIDKey = pushSettings, devices, s.cfg.VAPIDPublicKey
	return web.Render(c, status, "Account", views.AccountPage(d))
}
