package handlers

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"
)

// requireOwner sends signed-out visitors to sign in (or to first-run setup
// on a fresh install), then back to where they were going.
func (s *Server) requireOwner(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if currentOwner(c) != nil {
			return next(c)
		}
		has, err := s.store.HasOwner(c.Request().Context())
		if err != nil {
			return err
		}
		if !has {
			return redirect(c, "/setup")
		}
		target := "/login"
		if c.Request().Method == http.MethodGet {
			target += "?next=" + url.QueryEscape(c.Request().URL.RequestURI())
		}
		return redirect(c, target)
	}
}
