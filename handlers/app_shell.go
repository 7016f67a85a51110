package handlers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/static"
	"github.com/osfoundry/osfoundry/views"
)

// The installable app's files are public: installers and workers fetch them
// without the cookie.

// shellAssets are what the service worker caches at install.
var shellAssets = []string{"app.css", "htmx.min.js", "sse.js", "app.js", "logo.svg",
	"icon-192.png", "icon-512.png", "icon-maskable-512.png", "apple-touch-icon.png", "badge-96.png"}

// manifestIcon is one icon of the manifest.
type manifestIcon struct {
	Src     string `json:"src"`
	Sizes   string `json:"sizes"`
	Type    string `json:"type"`
	Purpose string `json:"purpose"`
}

// manifest puts the app on a home screen, opening on the inbox.
func (s *Server) manifest(c echo.Context) error {
	m := map[string]any{
		"id":               "/inbox",
		"name":             "osFoundry",
		"short_name":       "osFoundry",
		"description":      "Read and answer what your coding agents report.",
		"start_url":        "/inbox",
		"scope":            "/",
		"display":          "standalone",
		"orientation":      "any",
		"background_color": views.BackgroundLight,
		"theme_color":      views.ThemeLight,
		"icons": []manifestIcon{
			{static.URL("icon-192.png"), "192x192", "image/png", "any"},
			{static.URL("icon-512.png"), "512x512", "image/png", "any"},
			{static.URL("icon-maskable-512.png"), "512x512", "image/png", "maskable"},
		},
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.Blob(http.StatusOK, "application/manifest+json", b)
}

// serviceWorker is static/sw.js headed by the shell it caches.
var serviceWorker = func() []byte {
	shell := []string{"/offline"}
	for _, name := range shellAssets {
		shell = append(shell, static.URL(name))
	}
	list, _ := json.Marshal(shell)
	body, err := static.Read("sw.js")
	if err != nil {
		panic("handlers: static/sw.js is missing")
	}
	sum := sha256.Sum256(append(append([]byte{}, list...), body...))
	var b bytes.Buffer
	b.WriteString("var SHELL = " + string(list) + ";\nvar VERSION = \"" + hex.EncodeToString(sum[:6]) + "\";\n")
	b.Write(body)
	return b.Bytes()
}()

// serviceWorkerScript is at the root so that its scope is the whole app.
func (s *Server) serviceWorkerScript(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-cache")
	return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", serviceWorker)
}

// offlinePage is what the worker shows when a page cannot load.
func (s *Server) offlinePage(c echo.Context) error {
	var b strings.Builder
	if err := views.OfflinePage().Render(c.Request().Context(), &b); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.HTML(http.StatusOK, b.String())
}
