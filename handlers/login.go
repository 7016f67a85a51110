package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

func (s *Server) loginForm(c echo.Context) error {
	has, err := s.store.HasOwner(c.Request().Context())
	if err != nil {
		return err
	}
	if !has {
		return c.Redirect(http.StatusSeeOther, "/setup")
	}
	next := safeNext(c.QueryParam("next"))
	if web.Owner(c) != nil {
		return c.Redirect(http.StatusSeeOther, next)
	}
	return web.Render(c, http.StatusOK, "Sign in", views.LoginPage(views.LoginForm{Next: next}))
}

// loginSubmit signs in and goes where next points. The try is reserved before
// the password is hashed (web.SignInKeys).
func (s *Server) loginSubmit(c echo.Context) error {
	ctx := c.Request().Context()
	f := views.LoginForm{Email: c.FormValue("email"), Next: safeNext(c.FormValue("next"))}
	addr := c.RealIP()
	try, err := s.store.ReserveAttempt(ctx, store.ActionSignIn, addr, web.SignInKeys(f.Email)...)
	if err != nil {
		return err
	}
	if !try.Allowed {
		f.Error = web.RefuseAttempt(c, try)
		return web.Render(c, http.StatusTooManyRequests, "Sign in", views.LoginPage(f))
	}
	o, err := s.store.Authenticate(ctx, f.Email, c.FormValue("password"))
	if errors.Is(err, store.ErrInvalidCredentials) {
		f.Error = "That email and password do not match an owner account."
		f.Hint = web.TriesLeft(try)
		return web.Render(c, http.StatusUnauthorized, "Sign in", views.LoginPage(f))
	}
	if err != nil {
		return err
	}
	if err := s.store.AttemptSucceeded(ctx, store.ActionSignIn, addr, f.Email); err != nil {
		return err
	}
	if err := s.sessions.SignIn(c, o); err != nil {
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
