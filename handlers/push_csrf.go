package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
)

// pushCSRF gives the service worker the CSRF token to answer from a
// notification. No CORS: another site cannot read it.
func (s *Server) pushCSRF(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]string{"csrf": web.CSRF(c)})
}
