package handlers

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// access says who may call a route; its zero value stops the server at start
// (guard), so a route is never public by accident.
type access uint8

const (
	// accessPublic routes have no cookie session; MCP and OAuth check their own credentials.
	accessPublic access = iota + 1
	// accessWeb routes have the cookie session and CSRF check, signed out or not.
	accessWeb
	// accessOwner routes need a signed-in person of any role.
	accessOwner
	// accessMember routes need a member or an admin.
	accessMember
	// accessAdmin routes need an admin.
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

// guard returns an access level's middleware, outermost first, and panics on
// any other value. The store checks the role again in each write's transaction.
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

// requireOwner sends signed-out visitors to sign in (or to setup), then back.
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

// returnTo is where sign-in returns: the page, or for htmx the page it came from.
func returnTo(c echo.Context) string {
	if web.IsHTMX(c) {
		if u, err := url.Parse(c.Request().Header.Get("HX-Current-URL")); err == nil && u.Path != "" && u.Host == c.Request().Host {
			return u.RequestURI()
		}
	}
	return c.Request().URL.RequestURI()
}
