package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// ParamID reads a numeric path parameter; anything else is a 404.
func ParamID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, echo.NewHTTPError(http.StatusNotFound, "Page not found")
	}
	return id, nil
}

// Int64 reads an optional non-negative number; anything else is 0.
func Int64(v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
