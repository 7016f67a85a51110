package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// pushCSRF is GET /push/csrf: the sign-in's CSRF token, for the service
// worker, which answers a question from a notification's action with it as
// the page's form would. Another site cannot read it (no CORS); a browser
// signed out is sent to sign in, which the worker takes as "open the note".
func (s *Server) pushCSRF(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]string{"csrf": web.CSRF(c)})
}
