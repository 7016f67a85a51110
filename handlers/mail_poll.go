package handlers

import (
	"context"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// mailPoll returns the notes newer than ?after= and the receipts newer than
// ?receipts=; 204 when neither changed, without a query when the cache knows.
func (s *Server) mailPoll(c echo.Context) error {
	id, err := web.ParamID(c, "id")
	if err != nil {
		return err
	}
	o := web.Owner(c)
	after, seen := web.Int64(c.QueryParam("after")), web.Int64(c.QueryParam("receipts"))
	ctx := c.Request().Context()
	// Also the workspace check: another workspace's session is a 404.
	marks, err := s.mail.MailMarks(ctx, o.WorkspaceID, id)
	if err != nil {
		return err
	}
	if marks.Note <= after && marks.Receipt <= seen {
		return web.NoContent(c)
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
		return web.NoContent(c)
	}
	return web.Render(c, http.StatusOK, "", views.MailPollResponse(id, rows, update))
}

// receiptsAfter loads the receipts changed since seen: into rows new to the
// page, out of band for the others.
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
