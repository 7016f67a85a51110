package handlers

import (
	"github.com/labstack/echo/v4"
)

// logout is POST /logout: signs the owner out; their live streams end.
func (s *Server) logout(c echo.Context) error {
	if err := s.signOut(c); err != nil {
		return err
	}
	return redirect(c, "/login")
}
