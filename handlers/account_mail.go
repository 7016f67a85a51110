package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// accountMail is POST /account/mail: what the owner wants mailed, each a
// checkbox (questions, replies to them, the daily digest of unread agents'
// notes); an unticked box turns its mail off.
func (s *Server) accountMail(c echo.Context) error {
	on := func(name string) bool { return c.FormValue(name) == "on" }
	m := store.MailSettings{Questions: on("questions"), Replies: on("replies"), Digest: on("digest")}
	if err := s.store.SetMailSettingsAs(c.Request().Context(), actor(c), m); err != nil {
		return err
	}
	return redirect(c, "/account?done=mail")
}
