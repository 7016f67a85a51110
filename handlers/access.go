package handlers

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
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
	// accessOwner routes are accessWeb plus a signed-in person of any role
	// (viewers included): reading, exporting, one's own account.
	accessOwner
	// accessMember routes are accessOwner for members and admins: writing
	// notes, answering, inviting agents to sessions.
	accessMember
	// accessAdmin routes are accessOwner for admins: people, connections,
	// webhooks, project settings, the audit log.
	accessAdmin
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
	case accessMember:
		return "member"
	case accessAdmin:
		return "admin"
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// guard returns the middleware of an access level, outermost first. It
// panics on a value that is not one of the levels, so that Echo stops at
// start rather than serving a route unguarded. The role levels are checked
// here for a clear 403 early; the store checks the role again in the
// transaction of each write (store.Actor).
func (s *Server) guard(a access) []echo.MiddlewareFunc {
	switch a {
	case accessPublic:
		return nil
	case accessWeb:
		return []echo.MiddlewareFunc{web.CheckFormText, s.sessions.Load, web.CheckCSRF}
	case accessOwner:
		return []echo.MiddlewareFunc{web.CheckFormText, s.sessions.Load, web.CheckCSRF, s.requireOwner}
	case accessMember:
		return []echo.MiddlewareFunc{web.CheckFormText, s.sessions.Load, web.CheckCSRF, s.requireOwner, s.requireMember}
	case accessAdmin:
		return []echo.MiddlewareFunc{web.CheckFormText, s.sessions.Load, web.CheckCSRF, s.requireOwner, s.requireAdmin}
	}
	panic(fmt.Sprintf("handlers: route access %v is not public, web, owner, member or admin", a))
}

// requireMember refuses, with 403 and a sentence, a viewer.
func (s *Server) requireMember(next echo.HandlerFunc) echo.HandlerFunc {
	return requireRole(store.RoleMember, next)
}

// requireAdmin refuses, with 403 and a sentence, anyone but an admin.
func (s *Server) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return requireRole(store.RoleAdmin, next)
}

// requireRole lets through a signed-in person whose role allows need.
func requireRole(need store.Role, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if o := web.Owner(c); !o.Role.May(need) {
			return &store.RoleError{Need: need, Have: o.Role}
		}
		return next(c)
	}
}

// requireOwner sends signed-out visitors to sign in (or to first-run setup
// on a fresh install), then back to where they were going.
func (s *Server) requireOwner(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if web.Owner(c) != nil {
			return next(c)
		}
		has, err := s.store.HasOwner(c.Request().Context())
		if err != nil {
			return err
		}
		if !has {
			return web.Redirect(c, "/setup")
		}
		target := "/login"
		if c.Request().Method == http.MethodGet {
			target += "?next=" + url.QueryEscape(returnTo(c))
		}
		return web.Redirect(c, target)
	}
}

// returnTo is where a signed-out GET returns after sign-in: the page itself,
// or for an htmx request (a poll, a fragment) the page it came from.
func returnTo(c echo.Context) string {
	if web.IsHTMX(c) {
		if u, err := url.Parse(c.Request().Header.Get("HX-Current-URL")); err == nil && u.Path != "" && u.Host == c.Request().Host {
			return u.RequestURI()
		}
	}
	return c.Request().URL.RequestURI()
}
