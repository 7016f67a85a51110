package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// Login throttling: this many failures for an email or an address within the
// window lock sign-in for that email/address until the window passes.
const (
	loginMaxFailures = 10
	loginWindow      = 15 * time.Minute
)

// loginForm is GET /login: the sign-in form (the setup form while no owner
// exists; where next points when already signed in).
func (s *Server) loginForm(c echo.Context) error {
	has, err := s.store.HasOwner(c.Request().Context())
	if err != nil {
		return err
	}
	if !has {
		return c.Redirect(http.StatusSeeOther, "/setup")
	}
	next := safeNext(c.QueryParam("next"))
	if currentOwner(c) != nil {
		return c.Redirect(http.StatusSeeOther, next)
	}
	return s.render(c, http.StatusOK, "Sign in", views.LoginPage(views.LoginForm{Next: next}))
}

// loginSubmit is POST /login: signs the owner in and goes where next points;
// failures are counted and throttled.
func (s *Server) loginSubmit(c echo.Context) error {
	ctx := c.Request().Context()
	f := views.LoginForm{Email: c.FormValue("email"), Next: safeNext(c.FormValue("next"))}
	addr := c.RealIP()
	n, err := s.store.RecentLoginFailures(ctx, f.Email, addr, loginWindow)
	if err != nil {
		return err
	}
	if n >= loginMaxFailures {
		f.Error = "Too many failed sign-in attempts. Wait 15 minutes and try again."
		return s.render(c, http.StatusTooManyRequests, "Sign in", views.LoginPage(f))
	}
	o, err := s.store.Authenticate(ctx, f.Email, c.FormValue("password"))
	if errors.Is(err, store.ErrInvalidCredentials) {
		if err := s.store.RecordLoginFailure(ctx, f.Email, addr); err != nil {
			return err
		}
		f.Error = "That email and password do not match an owner account."
		return s.render(c, http.StatusUnauthorized, "Sign in", views.LoginPage(f))
	}
	if err != nil {
		return err
	}
	if err := s.store.ClearLoginFailures(ctx, f.Email); err != nil {
		return err
	}
	if err := s.signIn(c, o); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, f.Next)
}

// safeNext returns next when it is a local path, else "/": no open redirects.
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}
