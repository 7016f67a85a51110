package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/views"
)

// noteThread is a note and its replies, oldest first, with a composer.
func (s *Server) noteThread(c echo.Context) error {
	session, p, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	noteID, err := web.ParamID(c, "note")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	o := web.Owner(c)
	// Taken before the thread is read: the stream replays from no later.
	latest, err := s.mail.Follow(ctx, o.WorkspaceID, session.ID)
	if err != nil {
		return err
	}
	notes, err := s.store.ThreadNotes(ctx, o.WorkspaceID, session.ID, noteID)
	if err != nil {
		return err
	}
	lastRead, err := s.store.LastReadNote(ctx, o.ID, session.ID)
	if err != nil {
		return err
	}
	rows, err := s.withReceipts(ctx, o, session.ID, mailRows(o, notes, lastRead, false))
	if err != nil {
		return err
	}
	root := notes[0]
	v := views.ThreadView{Session: *session, Project: *p, Rows: rows, Latest: latest,
		Composer: views.Composer{SessionID: session.ID, ReplyTo: &root, InThread: true,
			Form: views.Form{Values: map[string]string{"subject": views.ReplySubject(root.Subject)}}}}
	web.Page(c).Nav = "projects"
	return web.Render(c, http.StatusOK, "Thread: "+session.Title, views.ThreadPage(v))
}
