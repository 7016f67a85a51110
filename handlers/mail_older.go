package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// mailOlder appends the page of notes before ?before=.
func (s *Server) mailOlder(c echo.Context) error {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	o := web.Owner(c)
	ctx := c.Request().Context()
	notes, err := s.store.ListSessionMail(ctx, o.WorkspaceID, session.ID, web.Int64(c.QueryParam("before")), store.MailPageSize)
	if err != nil {
		return err
	}
	more := len(notes) > store.MailPageSize
	if more {
		notes = notes[:store.MailPageSize]
	}
	var before int64
	if len(notes) > 0 {
		before = notes[len(notes)-1].ID
	}
	lastRead, err := s.store.LastReadNote(ctx, o.ID, session.ID)
	if err != nil {
		return err
	}
	rows, err := s.withReceipts(ctx, o, session.ID, mailRows(o, notes, lastRead, false))
	if err != nil {
		return err
	}
	return web.Render(c, http.StatusOK, "", views.MailOlderResponse(session.ID, rows, before, more))
}
