package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// deviceRename names one of the owner's devices.
func (s *Server) deviceRename(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	err = s.store.RenamePushSubscription(c.Request().Context(), web.Owner(c).ID, id, c.FormValue("name"))
	if fe := store.FieldErrorsOf(err); fe != nil {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "The device's name: "+fe[0].Message+".")
	}
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "No such device")
	}
	if err != nil {
		return err
	}
	return web.Redirect(c, "/account?done=device-renamed#devices")
}
