package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// deviceRemove is POST /account/devices/:id/remove: nothing more is pushed
// to that device; another owner's is not found.
func (s *Server) deviceRemove(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	err = s.store.RemovePushSubscription(c.Request().Context(), currentOwner(c).ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "No such device")
	}
	if err != nil {
		return err
	}
	return redirect(c, "/account?done=device-removed#devices")
}
