package handlers

import (
	"bytes"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/views"
)

// isHTMX reports whether the request came from htmx (and wants a fragment).
func isHTMX(c echo.Context) bool {
	return c.Request().Header.Get("HX-Request") == "true" && c.Request().Header.Get("HX-Boosted") != "true"
}

// page returns the views.Page of the request, creating it on first use.
func (s *Server) page(c echo.Context) *views.Page {
	if p, ok := c.Get("page").(*views.Page); ok {
		return p
	}
	p := &views.Page{Now: time.Now(), Owner: currentOwner(c), CSRF: csrfToken(c)}
	c.Set("page", p)
	return p
}

// render is the one way to send HTML: it buffers the component (a render
// error never sends half a page), sends the fragment alone to htmx requests
// and wraps it in the layout otherwise, and sets Vary: HX-Request.
func (s *Server) render(c echo.Context, status int, title string, body templ.Component) error {
	p := s.page(c)
	if title != "" {
		p.Title = title
	}
	comp := body
	if !isHTMX(c) {
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

// redirect sends a browser to url after a form post; htmx gets HX-Redirect.
func redirect(c echo.Context, url string) error {
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", url)
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, url)
}

// noContent answers a poll that has nothing new: 204, never cached.
func noContent(c echo.Context) error {
	h := c.Response().Header()
	h.Add("Vary", "HX-Request")
	h.Set("Cache-Control", "no-store")
	return c.NoContent(http.StatusNoContent)
}
