package web

import (
	"crypto/subtle"
	"net/http"

	"github.com/labstack/echo/v4"
)

const (
	keyCSRF = "csrf"
	// CSRFField is the form field that carries the CSRF token.
	CSRFField  = "_csrf"
	csrfHeader = "X-CSRF-Token"
)

// CSRF returns the session's CSRF token ("" outside web routes).
func CSRF(c echo.Context) string {
	if sess := cookieSession(c); sess != nil {
		t, _ := sess.Values[keyCSRF].(string)
		return t
	}
	return ""
}

// CheckCSRF refuses a state-changing request whose _csrf field or X-CSRF-Token
// header (htmx) does not match the session's.
func CheckCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		want := CSRF(c)
		got := c.Request().Header.Get(csrfHeader)
		if got == "" {
			got = c.FormValue(CSRFField)
		}
		if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			return echo.NewHTTPError(http.StatusForbidden, "This form has expired or did not come from this site. Reload the page and try again.")
		}
		return next(c)
	}
}
