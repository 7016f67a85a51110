package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// staticTokenCreate makes a connection with a fixed bearer token, shown once.
func (s *Server) staticTokenCreate(c echo.Context) error {
	ctx := c.Request().Context()
	o := web.Owner(c)
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
		return s.renderConnectionList(c, http.StatusUnprocessableEntity, form, nil)
	}
	conn, token, expires, err := s.store.CreateTokenConnectionAs(ctx, web.Actor(c), store.NewConnection{
		WorkspaceID: o.WorkspaceID, OwnerID: o.ID, ClientName: form.ClientName, Scopes: params["scope"], ProjectIDs: projectIDs,
	}, s.oauth.Resource(), store.StaticTokenTTL)
	var fe *store.FieldError
	switch {
	case errors.As(err, &fe):
		form.Errors[fe.Field] = fe.Message
		return s.renderConnectionList(c, http.StatusUnprocessableEntity, form, nil)
	case errors.Is(err, store.ErrNotFound):
		form.Errors["project"] = "one of the chosen projects no longer exists"
		return s.renderConnectionList(c, http.StatusUnprocessableEntity, form, nil)
	case err != nil:
		return err
	}
	s.log.Info("static token created", "connection_id", conn.ID, "owner_id", o.ID, "scopes", conn.Scopes)
	if err := web.StashReveal(c, "/connections", views.NewStaticToken{
		ClientName: conn.ClientName, Token: token, ExpiresAt: views.Exact(expires), MCPURL: s.oauth.Resource(),
	}); err != nil {
		return err
	}
	return web.Redirect(c, "/connections")
}
