package web

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/views"
)

// IsHTMX reports whether the request came from htmx (and wants a fragment).
func IsHTMX(c echo.Context) bool {
	return c.Request().Header.Get("HX-Request") == "true" && c.Request().Header.Get("HX-Boosted") != "true"
}

// Page returns the views.Page of the request, creating it on first use.
func Page(c echo.Context) *views.Page {
	if p, ok := c.Get(ctxPage).(*views.Page); ok {
		return p
	}
	p := &views.Page{Now: time.Now(), Owner: Owner(c), CSRF: CSRF(c)}
	c.Set(ctxPage, p)
	return p
}

// Render is the one way to send HTML: buffered (an error never sends half a
// page), the fragment alone for htmx, Vary: HX-Request.
func Render(c echo.Context, status int, title string, body templ.Component) error {
	p := Page(c)
	if title != "" {
		p.Title = title
	}
	comp := body
	if !IsHTMX(c) {
		comp = views.Layout(body)
	}
	var buf bytes.Buffer
	ctx := views.WithPage(c.Request().Context(), p)
	if err := comp.Render(ctx, &buf); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Add("Vary", "HX-Request")
	h.Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

// Fragment renders a component outside any request, as of now.
func Fragment(now time.Time, c templ.Component) ([]byte, error) {
	var buf bytes.Buffer
	err := c.Render(views.WithPage(context.Background(), &views.Page{Now: now}), &buf)
	return buf.Bytes(), err
}

// Redirect sends a browser to url after a form post; htmx gets HX-Redirect.
func Redirect(c echo.Context, url string) error {
	if IsHTMX(c) {
		c.Response().Header().Set("HX-Redirect", url)
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, url)
}

// NoContent answers a poll that has nothing new: 204, never cached.
func NoContent(c echo.Context) error {
	h := c.Response().Header()
	h.Add("Vary", "HX-Request")
	h.Set("Cache-Control", "no-store")
	return c.NoContent(http.StatusNoContent)
}
