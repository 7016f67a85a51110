package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// CheckFormText refuses fields or query parameters holding invalid UTF-8 or NUL,
// naming the first, before any handler or the database sees them.
func CheckFormText(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		params, err := c.FormParams()
		if err != nil && c.Request().Method == http.MethodPost {
			return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read.")
		}
		if field := badTextField(params); field != "" {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("The field %q contains invalid characters (invalid UTF-8 or a NUL byte).", field))
		}
		if field := badTextField(c.QueryParams()); field != "" {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("The parameter %q contains invalid characters (invalid UTF-8 or a NUL byte).", field))
		}
		return next(c)
	}
}

func badTextField(values map[string][]string) string {
	for name, vs := range values {
		if !store.CleanText(name) {
			return strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "?")
		}
		for _, v := range vs {
			if !store.CleanText(v) {
				return name
			}
		}
	}
	return ""
}
