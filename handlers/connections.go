package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// connections is GET /connections: the workspace's connections, and right
// after a static token was minted, that token, once.
func (s *Server) connections(c echo.Context) error {
	form := views.StaticTokenForm{Scopes: map[string]bool{store.ScopeRead: true, store.ScopeWrite: true}}
	var tok views.NewStaticToken
	shown, err := s.takeReveal(c, "/connections", &tok)
	if err != nil {
		return err
	}
	if !shown {
		return s.renderConnections(c, http.StatusOK, form, nil)
	}
	return s.renderConnections(c, http.StatusOK, form, &tok)
}

func (s *Server) renderConnections(c echo.Context, status int, form views.StaticTokenForm, tok *views.NewStaticToken) error {
	ctx := c.Request().Context()
	o := currentOwner(c)
	conns, err := s.store.ListConnections(ctx, o.WorkspaceID)
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
	s.page(c).Nav = "connections"
	return s.render(c, status, "Connections", views.ConnectionsPage(views.ConnectionsData{
		Connections: conns, Projects: projects, Form: form, NewToken: tok,
	}))
}

// createStaticToken is POST /connections/tokens: a connection for a client
// that only takes a fixed bearer header, with its token shown once.
func (s *Server) createStaticToken(c echo.Context) error {
	ctx := c.Request().Context()
	o := currentOwner(c)
	params, _ := c.FormParams()
	form := views.StaticTokenForm{
		ClientName: strings.TrimSpace(c.FormValue("client_name")),
		Scopes:     map[string]bool{},
		Projects:   map[int64]bool{},
		Errors:     views.FormErrors{},
	}
	for _, sc := range params["scope"] {
		form.Scopes[sc] = true
	}
	var projectIDs []int64
	for _, v := range params["project"] {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			form.Errors["project"] = "choose projects from the list"
			continue
		}
		if !form.Projects[id] {
			form.Projects[id] = true
			projectIDs = append(projectIDs, id)
		}
	}
	if form.ClientName == "" || len([]rune(form.ClientName)) > 200 {
		form.Errors["client_name"] = "enter a name of 1 to 200 characters, so you can tell this connection apart"
	}
	if len(form.Errors) > 0 {
		return s.renderConnections(c, http.StatusUnprocessableEntity, form, nil)
	}
	conn, token, expires, err := s.store.CreateTokenConnection(ctx, store.NewConnection{
		WorkspaceID: o.WorkspaceID, OwnerID: o.ID, ClientName: form.ClientName, Scopes: params["scope"], ProjectIDs: projectIDs,
	}, s.oauth.Resource(), store.StaticTokenTTL)
	var fe *store.FieldError
	switch {
	case errors.As(err, &fe):
		form.Errors[fe.Field] = fe.Message
		return s.renderConnections(c, http.StatusUnprocessableEntity, form, nil)
	case errors.Is(err, store.ErrNotFound):
		form.Errors["project"] = "one of the chosen projects no longer exists"
		return s.renderConnections(c, http.StatusUnprocessableEntity, form, nil)
	case err != nil:
		return err
	}
	s.log.Info("static token created", "connection_id", conn.ID, "owner_id", o.ID, "scopes", conn.Scopes)
	if err := s.stashReveal(c, "/connections", views.NewStaticToken{
		ClientName: conn.ClientName, Token: token, ExpiresAt: views.Exact(expires), MCPURL: s.oauth.Resource(),
	}); err != nil {
		return err
	}
	return redirect(c, "/connections")
}

// connectionParam loads the connection named in the path, in the owner's
// workspace only (another workspace's id is a 404).
func (s *Server) connectionParam(c echo.Context) (*store.Connection, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return nil, store.ErrNotFound
	}
	conn, err := s.store.GetConnection(c.Request().Context(), currentOwner(c).WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if conn.RevokedAt != nil {
		return nil, store.ErrNotFound
	}
	return conn, nil
}

// confirmRevokeConnection is GET /connections/:id/revoke: are you sure?
func (s *Server) confirmRevokeConnection(c echo.Context) error {
	conn, err := s.connectionParam(c)
	if err != nil {
		return err
	}
	s.page(c).Nav = "connections"
	return s.render(c, http.StatusOK, "Revoke "+conn.ClientName, views.ConfirmRevokePage(conn))
}

// revokeConnection is POST /connections/:id/revoke: tokens deleted, status cleared.
func (s *Server) revokeConnection(c echo.Context) error {
	conn, err := s.connectionParam(c)
	if err != nil {
		return err
	}
	if err := s.store.RevokeConnection(c.Request().Context(), conn.WorkspaceID, conn.ID); err != nil {
		return err
	}
	s.log.Info("connection revoked", "connection_id", conn.ID, "owner_id", currentOwner(c).ID)
	return redirect(c, "/connections")
}
