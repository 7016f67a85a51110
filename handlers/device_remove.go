package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// deviceRemove stops pushes to one of the owner's devices.
func (s *Server) deviceRemove(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	err = s.store.RemovePushSubscription(c.Request().Context(), web.Owner(c).ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "No such device")
	}
	if err != nil {
		return err
	}
	return web.Redirect(c, "/account?done=device-removed#devices")
}
