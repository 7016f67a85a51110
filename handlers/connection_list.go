package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// connectionList shows the connections and a static token just minted, once.
func (s *Server) connectionList(c echo.Context) error {
	form := views.StaticTokenForm{Scopes: map[string]bool{store.ScopeRead: true, store.ScopeWrite: true}}
	var tok views.NewStaticToken
	shown, err := web.TakeReveal(c, "/connections", &tok)
	if err != nil {
		return err
	}
	if !shown {
		return s.renderConnectionList(c, http.StatusOK, form, nil)
	}
	return s.renderConnectionList(c, http.StatusOK, form, &tok)
}

func (s *Server) renderConnectionList(c echo.Context, status int, form views.StaticTokenForm, tok *views.NewStaticToken) error {
	ctx := c.Request().Context()
	o := web.Owner(c)
	conns, err := s.store.ListConnections(ctx, o.WorkspaceID)
	if err != nil {
		return err
	}
	revoked, err := s.store.ListRevokedConnections(ctx, o.WorkspaceID)
	if err != nil {
		return err
	}
	projects, err := s.store.ListProjects(ctx, o.WorkspaceID)
	if err != nil {
		return err
	}
	if form.Projects == nil {
		form.Projects = map[int64]bool{}
	}
	web.Page(c).Nav = "connections"
	return web.Render(c, status, "Connections", views.ConnectionsPage(views.ConnectionsData{
		Connections: conns, Revoked: revoked, Projects: projects, Form: form, NewToken: tok,
		ServerURL: s.cfg.BaseURL, Osfoundry: osfoundryCommand(),
	}))
}
