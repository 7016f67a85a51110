package handlers

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// replyTarget loads the note a reply answers (404 outside the session), with
// the form errors of a revoked agent.
func (s *Server) replyTarget(c echo.Context, session *store.Session, noteID int64) (*store.Note, views.FormErrors, error) {
	n, err := s.store.ReplyTarget(c.Request().Context(), session.WorkspaceID, session.ID, noteID, web.Owner(c).ID)
	switch {
	case errors.Is(err, store.ErrNotAnswerable):
		return nil, nil, echo.NewHTTPError(http.StatusNotFound, "No such note in this session")
	case errors.Is(err, store.ErrRecipientRevoked):
		return n, views.FormErrors{store.ErrRecipientRevoked.Field: store.ErrRecipientRevoked.Message}, nil
	}
	return n, nil, err
}

// notePost posts an owner's note; htmx gets the newer rows and a fresh composer.
func (s *Server) notePost(c echo.Context) error {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	o := web.Owner(c)
	f := web.Form(c, "type", "reply_to", "subject", "body")
	comp := views.Composer{SessionID: session.ID, Form: f, Open: true}
	in := store.OwnerNote{WorkspaceID: o.WorkspaceID, SessionID: session.ID, OwnerID: o.ID, Type: f.Value("type"),
		Subject: f.Value("subject"), Body: f.Value("body")}
	if in.Type == store.MessageReply {
		if comp.ReplyTo, _, err = s.replyTarget(c, session, web.Int64(f.Value("reply_to"))); err != nil {
			return err
		}
		in.ReplyTo = comp.ReplyTo.ID
	}
	note, _, err := s.store.PostOwnerNote(ctx, in)
	if err != nil {
		if comp.Form.Errors, err = web.FieldErrors(err); err != nil {
			return err
		}
		if web.IsHTMX(c) {
			c.Response().Header().Set("HX-Retarget", "#"+comp.ID())
			c.Response().Header().Set("HX-Reswap", "outerHTML")
			return web.Render(c, http.StatusUnprocessableEntity, "", views.ComposerForm(comp))
		}
		return web.Render(c, http.StatusUnprocessableEntity, "Write a note", views.ComposePage(comp))
	}
	if !web.IsHTMX(c) {
		return web.Redirect(c, fmt.Sprintf("/sessions/%d#note-%d", session.ID, note.ID))
	}
	rows, err := s.rowsAfter(ctx, o, session.ID, web.Int64(c.FormValue("after")))
	if err != nil {
		return err
	}
	msg := "Note posted to the whole session."
	switch {
	case note.MessageType == store.MessageAnalysis:
		msg = "Analysis note saved; only owners see it."
	case note.RecipientSlug != nil:
		msg = "Reply sent to " + *note.RecipientSlug + "."
	}
	reset := views.Composer{SessionID: session.ID, ReplyTo: comp.ReplyTo, OOB: true}
	return web.Render(c, http.StatusOK, "", views.NotePostedResponse(session.ID, rows, reset, msg))
}
