package handlers

import (
	"context"
	"net/http"
	"slices"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// mailRows marks which notes are unread for the owner: newer than what they
// had seen, and not their own.
func mailRows(o *store.Owner, notes []store.Note, lastRead int64) []views.MailRow {
	rows := make([]views.MailRow, len(notes))
	for i, n := range notes {
		rows[i] = views.MailRow{Note: n, Unread: n.ID > lastRead && !n.SentBy(o.ID)}
	}
	return rows
}

// withReceipts adds the read receipts of the owners' notes among rows.
func (s *Server) withReceipts(ctx context.Context, o *store.Owner, sessionID int64, rows []views.MailRow) ([]views.MailRow, error) {
	var ids []int64
	for _, r := range rows {
		if r.Note.SenderKind == store.SenderOwner {
			ids = append(ids, r.Note.ID)
		}
	}
	receipts, err := s.store.NoteReceipts(ctx, o.WorkspaceID, sessionID, ids)
	if err != nil || len(receipts) == 0 {
		return rows, err
	}
	byNote := map[int64][]store.Receipt{}
	for _, rc := range receipts {
		byNote[rc.NoteID] = append(byNote[rc.NoteID], rc)
	}
	for i := range rows {
		rows[i].Receipts = byNote[rows[i].Note.ID]
	}
	return rows, nil
}

// receiptsLine loads the receipts line of one owner's note (nil while nobody
// read it): what the live stream's receipt event shows.
func (s *Server) receiptsLine(ctx context.Context, workspaceID, sessionID, noteID int64) (templ.Component, error) {
	receipts, err := s.store.NoteReceipts(ctx, workspaceID, sessionID, []int64{noteID})
	return views.ReadBy(receipts), err
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

// mailPoll returns the notes newer than ?after=, newest first, and, when
// agents read owners' notes since the receipt ?receipts=, those notes'
// receipt lines out of band with the cursor to send next; 204 when neither
// changed. When the hub is sure nothing changed it answers without touching
// the database.
func (s *Server) mailPoll(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	o := currentOwner(c)
	after, seen := int64Param(c.QueryParam("after")), int64Param(c.QueryParam("receipts"))
	ctx := c.Request().Context()
	// Also the workspace check: another workspace's session is a 404.
	marks, err := s.hub.Marks(ctx, o.WorkspaceID, id)
	if err != nil {
		return err
	}
	if marks.Note <= after && marks.Receipt <= seen {
		return noContent(c)
	}
	var rows []views.MailRow
	if marks.Note > after {
		if rows, err = s.rowsAfter(ctx, o, id, after); err != nil {
			return err
		}
	}
	var update *views.ReceiptsUpdate
	if marks.Receipt > seen {
		if update, err = s.receiptsAfter(ctx, o, id, seen, marks.Receipt, rows); err != nil {
			return err
		}
	}
	if len(rows) == 0 && update == nil {
		return noContent(c)
	}
	return s.render(c, http.StatusOK, "", views.MailPollResponse(id, rows, update))
}

// receiptsAfter loads the receipt lines that changed since the receipt seen:
// those of notes among rows (new to the page) go into their rows, the others
// out of band. The cursor becomes the newest receipt loaded, or latest.
func (s *Server) receiptsAfter(ctx context.Context, o *store.Owner, sessionID, seen, latest int64, rows []views.MailRow) (*views.ReceiptsUpdate, error) {
	receipts, err := s.store.ReceiptsAfter(ctx, o.WorkspaceID, sessionID, seen)
	if err != nil {
		return nil, err
	}
	update := &views.ReceiptsUpdate{Cursor: max(seen, latest)}
	for _, l := range views.GroupReceipts(receipts) {
		for _, rc := range l.Receipts {
			update.Cursor = max(update.Cursor, rc.ID)
		}
		if i := slices.IndexFunc(rows, func(r views.MailRow) bool { return r.Note.ID == l.NoteID }); i >= 0 {
			rows[i].Receipts = l.Receipts
			continue
		}
		update.Lines = append(update.Lines, l)
	}
	return update, nil
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
	rows, err := s.withReceipts(ctx, o, session.ID, mailRows(o, notes, lastRead))
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "", views.MailOlderResponse(session.ID, rows, before, more))
}
