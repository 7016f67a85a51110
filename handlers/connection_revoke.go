package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// connectionParam loads the path's connection in the owner's workspace only.
func (s *Server) connectionParam(c echo.Context) (*store.Connection, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return nil, store.ErrNotFound
	}
	conn, err := s.store.GetConnection(c.Request().Context(), web.Owner(c).WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if conn.RevokedAt != nil {
		return nil, store.ErrNotFound
	}
	return conn, nil
}

// connectionRevokeConfirm is GET /connections/:id/revoke: are you sure?
func (s *Server) connectionRevokeConfirm(c echo.Context) error {
	conn, err := s.connectionParam(c)
	if err != nil {
		return err
	}
	web.Page(c).Nav = "connections"
	return web.Render(c, http.StatusOK, "Revoke "+conn.ClientName, views.ConfirmRevokePage(conn))
}

// connectionRevoke is POST /connections/:id/revoke: tokens deleted, status cleared.
func (s *Server) connectionRevoke(c echo.Context) error {
	conn, err := s.connectionParam(c)
	if err != nil {
		return err
	}
	if err := s.store.RevokeConnectionAs(c.Request().Context(), web.Actor(c), conn.ID); err != nil {
		return err
	}
	s.log.Info("connection revoked", "connection_id", conn.ID, "owner_id", web.Owner(c).ID)
	return web.Redirect(c, "/connections")
}
