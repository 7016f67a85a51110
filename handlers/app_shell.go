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

// The installable app: its manifest, its service worker and the page the
// worker shows offline. All three are public (an installer and a worker
// fetch them without the owner's cookie) and say nothing of any owner.

// shellAssets are what the service worker caches at install, besides the
// offline page: the stylesheet, the scripts and the icons.
var shellAssets = []string{"app.css", "htmx.min.js", "sse.js", "app.js", "logo.svg",
	"icon-192.png", "icon-512.png", "icon-maskable-512.png", "apple-touch-icon.png", "badge-96.png"}

// manifestIcon is one icon of the manifest.
type manifestIcon struct {
	Src     string `json:"src"`
	Sizes   string `json:"sizes"`
	Type    string `json:"type"`
	Purpose string `json:"purpose"`
}

// manifest is GET /manifest.webmanifest: what an installer needs to put
// the app on a home screen, opening on the inbox.
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

// serviceWorker is the worker's script, static/sw.js headed by the shell it
// caches; built once.
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

// serviceWorkerScript is GET /sw.js, at the root so that its scope is the
// whole app; revalidated on each check, so a release reaches browsers on
// their next visit.
func (s *Server) serviceWorkerScript(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-cache")
	return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", serviceWorker)
}

// offlinePage is GET /offline, the page the worker shows when one cannot
// load; it needs nothing but the cached shell.
func (s *Server) offlinePage(c echo.Context) error {
	var b strings.Builder
	if err := views.OfflinePage().Render(c.Request().Context(), &b); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.HTML(http.StatusOK, b.String())
}
