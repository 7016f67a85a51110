package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

// accountPush saves what is pushed to the owner's devices.
func (s *Server) accountPush(c echo.Context) error {
	o := web.Owner(c)
	on := func(name string) bool { return c.FormValue(name) == "on" }
	p := store.PushSettings{Questions: on("questions"), Replies: on("replies")}
	if err := s.store.SetPushSettings(c.Request().Context(), o.WorkspaceID, o.ID, p); err != nil {
		return err
	}
	return web.Redirect(c, "/account?done=push#devices")
}
