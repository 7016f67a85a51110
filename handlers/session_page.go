package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// sessionOf loads the :id session of the owner's workspace and its project.
func (s *Server) sessionOf(c echo.Context) (*store.Session, *store.Project, error) {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return nil, nil, err
	}
	ctx := c.Request().Context()
	ws := web.Owner(c).WorkspaceID
	session, err := s.store.GetSession(ctx, ws, id)
	if err != nil {
		return nil, nil, err
	}
	p, err := s.store.GetProject(ctx, ws, session.ProjectID)
	if err != nil {
		return nil, nil, err
	}
	return session, p, nil
}

// sessionPage is the Team mail tab; ?note= opens the page a note is on.
func (s *Server) sessionPage(c echo.Context) error {
	session, p, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	o := web.Owner(c)
	// The receipt mark is taken before the rows' receipts are read, so the polls
	// start from no later than what the page shows.
	marks, err := s.mail.MailMarks(ctx, o.WorkspaceID, session.ID)
	if err != nil {
		return err
	}
	before := web.Int64(c.QueryParam("before"))
	notes, err := s.store.ListSessionMail(ctx, o.WorkspaceID, session.ID, before, store.MailPageSize)
	if err != nil {
		return err
	}
	if note := web.Int64(c.QueryParam("note")); before == 0 && note > 0 && len(notes) > store.MailPageSize && note < notes[store.MailPageSize-1].ID {
		before = note + 1
		if notes, err = s.store.ListSessionMail(ctx, o.WorkspaceID, session.ID, before, store.MailPageSize); err != nil {
			return err
		}
	}
	v := views.SessionView{Session: *session, Project: *p, Composer: views.Composer{SessionID: session.ID}, Paged: before > 0,
		Receipts: marks.Receipt, ServerURL: s.cfg.BaseURL, Osfoundry: osfoundryCommand()}
	if len(notes) > store.MailPageSize {
		notes, v.HasOlder = notes[:store.MailPageSize], true
	}
	if len(notes) > 0 {
		v.Newest, v.Before = notes[0].ID, notes[len(notes)-1].ID
	}
	lastRead, err := s.store.MarkMailRead(ctx, o.ID, session.ID, v.Newest)
	if err != nil {
		return err
	}
	if v.Rows, err = s.withReceipts(ctx, o, session.ID, mailRows(o, notes, lastRead, false)); err != nil {
		return err
	}
	if v.Presence, err = s.presenceView(c, session, p); err != nil {
		return err
	}
	if v.Approvals, err = s.approvalsView(c, session.ID); err != nil {
		return err
	}
	web.Page(c).Nav = "projects"
	return web.Render(c, http.StatusOK, session.Title, views.SessionPage(v))
}
