package handlers

import (
	"github.com/labstack/echo/v4"
)

// signInEndOthers is POST /account/sign-ins/end-others: "Sign out all
// others" ends every sign-in of the owner but this browser's.
func (s *Server) signInEndOthers(c echo.Context) error {
	o, si := currentOwner(c), currentSignIn(c)
	n, err := s.store.EndOtherSignIns(c.Request().Context(), actor(c), si.ID)
	if err != nil {
		return err
	}
	s.signIns.forgetOthers(o.ID, si.ID)
	s.log.Info("other sign-ins ended", "owner_id", o.ID, "ended", n)
	return redirect(c, "/account?done=others")
}
