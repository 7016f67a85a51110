package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/osfoundry/osfoundry/handlers/inbound"
	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// Handler returns the application as an http.Handler.
func (s *Server) Handler() http.Handler { return s.Echo() }

// Echo builds the echo instance from the routing table.
func (s *Server) Echo() *echo.Echo {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = web.ErrorHandler(s.log)
	e.IPExtractor = echo.ExtractIPDirect()
	if s.cfg.TrustProxyHeaders {
		e.IPExtractor = echo.ExtractIPFromXFFHeader()
	}
	e.Pre(middleware.RequestID())
	// Every body is capped at 1 MiB; a Host that is neither the public origin's
	// nor loopback gets 421, /mcp included (its front checks the Origin only).
	e.Use(web.LogRequests(s.log, s.requests), web.Recover(s.log), middleware.BodyLimit(strconv.Itoa(inbound.MaxBodyBytes)), securityHeaders, echo.WrapMiddleware(inbound.RequireHost(s.publicHost)))
	for _, r := range s.routes() {
		e.Add(r.method, r.path, r.handler, s.guard(r.access)...).Name = r.name
	}
	// A URL no route matches gets the 404 page with the signed-in navigation.
	e.RouteNotFound("/*", notFound, s.sessions.Load)
	return e
}

// notFound answers a URL that no route matches.
func notFound(echo.Context) error { return store.ErrNotFound }

func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		if c.Path() != "/mcp" {
			h.Set("X-Frame-Options", "DENY")
			h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self' http: https:; base-uri 'none'")
		}
		return next(c)
	}
}
