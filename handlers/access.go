package handlers

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"
)

// access says who may call a route, and so which middleware guards it. The
// zero value is no access level at all: a route left without one stops the
// server at start (see guard), it never becomes public by accident.
type access uint8

const (
	// accessPublic routes have no cookie session: operations probes, static
	// files, and the MCP and OAuth endpoints, which check their own credentials.
	accessPublic access = iota + 1
	// accessWeb routes have the cookie session and CSRF check; signed-out
	// visitors are allowed (sign-in, first-run setup, the consent page).
	accessWeb
	// accessOwner routes are accessWeb plus a signed-in owner.
	accessOwner
)

// String names the access level, as the routing table means it.
func (a access) String() string {
	switch a {
	case accessPublic:
		return "public"
	case accessWeb:
		return "web"
	case accessOwner:
		return "owner"
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// guard returns the middleware of an access level, outermost first. It
// panics on a value that is not one of the three levels, so that Echo stops
// at start rather than serving a route unguarded.
func (s *Server) guard(a access) []echo.MiddlewareFunc {
	switch a {
	case accessPublic:
		return nil
	case accessWeb:
		return []echo.MiddlewareFunc{checkFormText, s.loadSession, s.checkCSRF}
	case accessOwner:
		return []echo.MiddlewareFunc{checkFormText, s.loadSession, s.checkCSRF, s.requireOwner}
	}
	panic(fmt.Sprintf("handlers: route access %v is not public, web or owner", a))
}

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
			target += "?next=" + url.QueryEscape(returnTo(c))
		}
		return redirect(c, target)
	}
}

// returnTo is where a signed-out GET returns after sign-in: the page itself,
// or for an htmx request (a poll, a fragment) the page it came from.
func returnTo(c echo.Context) string {
	if isHTMX(c) {
		if u, err := url.Parse(c.Request().Header.Get("HX-Current-URL")); err == nil && u.Path != "" && u.Host == c.Request().Host {
			return u.RequestURI()
		}
	}
	return c.Request().URL.RequestURI()
}
