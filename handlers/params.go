package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// paramID reads a numeric path parameter; anything else is a 404.
func paramID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, echo.NewHTTPError(http.StatusNotFound, "Page not found")
	}
	return id, nil
}

// projectParam loads the project the route's :id names, in the signed-in
// owner's workspace only.
func (s *Server) projectParam(c echo.Context) (*store.Project, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return nil, err
	}
	return s.store.GetProject(c.Request().Context(), currentOwner(c).WorkspaceID, id)
}

// int64Param reads an optional non-negative number from the query or form.
func int64Param(v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// invitationOf reads the session and the invited connection an invitation's
// route names.
func (s *Server) invitationOf(c echo.Context) (*store.Session, int64, error) {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return nil, 0, err
	}
	conn, err := paramID(c, "conn")
	if err != nil {
		return nil, 0, err
	}
	return session, conn, nil
}

// webhookParams reads the project and endpoint of a webhook route.
func webhookParams(c echo.Context) (projectID, endpointID int64, err error) {
	if projectID, err = paramID(c, "id"); err != nil {
		return 0, 0, err
	}
	endpointID, err = paramID(c, "hook")
	return projectID, endpointID, err
}
