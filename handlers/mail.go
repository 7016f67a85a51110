package handlers

import (
	"context"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// mailRows are the owner's rows of notes, lastRead their read mark before them.
func mailRows(o *store.Owner, notes []store.Note, lastRead int64, live bool) []views.MailRow {
	rows := make([]views.MailRow, len(notes))
	for i, n := range notes {
		rows[i] = views.NewMailRow(n, n.SentBy(o.ID), lastRead, live)
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

// rowsAfter loads the notes newer than after and records them as seen.
func (s *Server) rowsAfter(ctx context.Context, o *store.Owner, sessionID, after int64) ([]views.MailRow, error) {
	notes, err := s.store.SessionMailAfter(ctx, o.WorkspaceID, sessionID, after)
	if err != nil || len(notes) == 0 {
		return nil, err
	}
	lastRead, err := s.store.MarkMailRead(ctx, o.ID, sessionID, notes[0].ID)
	if err != nil {
		return nil, err
	}
	return mailRows(o, notes, lastRead, true), nil
}
