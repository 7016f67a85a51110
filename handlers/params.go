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
