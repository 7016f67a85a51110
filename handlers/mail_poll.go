package handlers

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// mailRows marks which notes are unread for the owner: newer than what they
// had seen, and not their own.
func mailRows(o *store.Owner, notes []store.Note, lastRead int64) []views.MailRow {
	rows := make([]views.MailRow, len(notes))
	for i, n := range notes {
		own := n.SenderOwnerID != nil && *n.SenderOwnerID == o.ID
		rows[i] = views.MailRow{Note: n, Unread: n.ID > lastRead && !own}
	}
	return rows
}

// rowsAfter loads the notes newer than after, marks them unread or not, and
// records them as seen: they are on the owner's screen now.
func (s *Server) rowsAfter(ctx context.Context, o *store.Owner, sessionID, after int64) ([]views.MailRow, error) {
	notes, err := s.store.SessionMailAfter(ctx, o.WorkspaceID, sessionID, after)
	if err != nil || len(notes) == 0 {
		return nil, err
	}
	lastRead, err := s.store.MarkMailRead(ctx, o.ID, sessionID, notes[0].ID)
	if err != nil {
		return nil, err
	}
	return mailRows(o, notes, lastRead), nil
}

// mailPoll returns the notes newer than ?after=, newest first, or 204 when
// there are none. When the hub is sure nothing changed it answers without
// touching the database.
func (s *Server) mailPoll(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	o := currentOwner(c)
	after := int64Param(c.QueryParam("after"))
	ctx := c.Request().Context()
	latest, sure := s.hub.Latest(o.WorkspaceID, id)
	if !sure {
		// Also the workspace check: another workspace's session is a 404.
		if latest, err = s.hub.Track(ctx, o.WorkspaceID, id); err != nil {
			return err
		}
	}
	if latest <= after {
		return noContent(c)
	}
	rows, err := s.rowsAfter(ctx, o, id, after)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return noContent(c)
	}
	return s.render(c, http.StatusOK, "", views.MailRows(id, rows))
}

// mailOlder appends the page of notes before ?before=.
func (s *Server) mailOlder(c echo.Context) error {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	o := currentOwner(c)
	ctx := c.Request().Context()
	notes, err := s.store.ListSessionMail(ctx, o.WorkspaceID, session.ID, int64Param(c.QueryParam("before")), store.MailPageSize)
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
	return s.render(c, http.StatusOK, "", views.MailOlderResponse(session.ID, mailRows(o, notes, lastRead), before, more))
}
