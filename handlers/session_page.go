package handlers

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// sessionOf loads the :id session of the owner's workspace and its project.
func (s *Server) sessionOf(c echo.Context) (*store.Session, *store.Project, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return nil, nil, err
	}
	ctx := c.Request().Context()
	ws := currentOwner(c).WorkspaceID
	x, err := s.store.GetSession(ctx, ws, id)
	if err != nil {
		return nil, nil, err
	}
	p, err := s.store.GetProject(ctx, ws, x.ProjectID)
	if err != nil {
		return nil, nil, err
	}
	return x, p, nil
}

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

// sessionPage is the Team mail tab: newest notes first, the composer, and
// the presence sidebar; it polls for more.
func (s *Server) sessionPage(c echo.Context) error {
	x, p, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	o := currentOwner(c)
	// Tracking the session lets the hub answer its polls without a query.
	if _, err := s.hub.Track(ctx, o.WorkspaceID, x.ID); err != nil {
		return err
	}
	before := int64Param(c.QueryParam("before"))
	notes, err := s.store.ListSessionMail(ctx, o.WorkspaceID, x.ID, before, store.MailPageSize)
	if err != nil {
		return err
	}
	v := views.SessionView{Session: *x, Project: *p, Composer: views.Composer{SessionID: x.ID}, Paged: before > 0}
	if len(notes) > store.MailPageSize {
		notes, v.HasOlder = notes[:store.MailPageSize], true
	}
	if len(notes) > 0 {
		v.Newest, v.Before = notes[0].ID, notes[len(notes)-1].ID
	}
	lastRead, err := s.store.MarkMailRead(ctx, o.ID, x.ID, v.Newest)
	if err != nil {
		return err
	}
	v.Rows = mailRows(o, notes, lastRead)
	if v.Presence, err = s.presenceView(c, x, p); err != nil {
		return err
	}
	s.page(c).Nav = "projects"
	return s.render(c, http.StatusOK, x.Title, views.SessionPage(v))
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
	x, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	o := currentOwner(c)
	ctx := c.Request().Context()
	notes, err := s.store.ListSessionMail(ctx, o.WorkspaceID, x.ID, int64Param(c.QueryParam("before")), store.MailPageSize)
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
	lastRead, err := s.store.LastReadNote(ctx, o.ID, x.ID)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "", views.MailOlderResponse(x.ID, mailRows(o, notes, lastRead), before, more))
}

// presenceView loads the sidebar and fingerprints what it would show.
func (s *Server) presenceView(c echo.Context, x *store.Session, p *store.Project) (views.PresenceView, error) {
	agents, err := s.store.ListSeatedAgents(c.Request().Context(), x.WorkspaceID, x.ProjectID)
	if err != nil {
		return views.PresenceView{}, err
	}
	now := s.page(c).Now
	h := fnv.New64a()
	fmt.Fprintf(h, "%q\x00", p.Name)
	str := func(v *string) string {
		if v == nil {
			return "\x01"
		}
		return *v
	}
	for _, a := range agents {
		fmt.Fprintf(h, "%d\x00%q\x00%q\x00%q\x00%s\x00%q\x00%q\x00%q\x00", a.ConnectionID, a.Handle, a.DisplayName, a.ClientName,
			a.Presence, str(a.Status.Repo), str(a.Status.Branch), str(a.Status.Task))
		if a.Status.UpdatedAt != nil {
			fmt.Fprintf(h, "%d\x00%s\x00%t\x00", a.Status.UpdatedAt.UnixMicro(), views.Ago(now, *a.Status.UpdatedAt), views.IsStale(now, a.Status.UpdatedAt))
		}
	}
	return views.PresenceView{SessionID: x.ID, Project: *p, Agents: agents, Version: strconv.FormatUint(h.Sum64(), 36)}, nil
}

// presencePoll returns the sidebar, or 204 when it would look the same as
// the version the page shows (?v=).
func (s *Server) presencePoll(c echo.Context) error {
	x, p, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	v, err := s.presenceView(c, x, p)
	if err != nil {
		return err
	}
	if c.QueryParam("v") == v.Version {
		return noContent(c)
	}
	return s.render(c, http.StatusOK, "", views.PresenceSidebar(v))
}

// replyTarget loads the agent note a reply answers (404 otherwise).
func (s *Server) replyTarget(c echo.Context, x *store.Session, noteID int64) (*store.Note, error) {
	n, err := s.store.GetSessionNote(c.Request().Context(), x.WorkspaceID, x.ID, noteID)
	if err != nil {
		return nil, err
	}
	if n.SenderKind != "agent" {
		return nil, echo.NewHTTPError(http.StatusNotFound, "Only an agent's note can be answered")
	}
	return n, nil
}

// compose opens the reply composer for an agent's note: inline for htmx,
// as a page of its own otherwise.
func (s *Server) compose(c echo.Context) error {
	x, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	n, err := s.replyTarget(c, x, int64Param(c.QueryParam("reply_to")))
	if err != nil {
		return err
	}
	comp := views.Composer{SessionID: x.ID, ReplyTo: n, Form: views.Form{Values: map[string]string{"subject": views.ReplySubject(n.Subject)}}}
	if isHTMX(c) {
		return s.render(c, http.StatusOK, "", views.ComposerForm(comp))
	}
	return s.render(c, http.StatusOK, "Reply to "+n.SenderSlug, views.ComposePage(comp))
}

// notePost posts an owner's reply, note to the whole session, or analysis
// note. htmx gets every note newer than the page had (the new one among
// them) to prepend, and a fresh composer; a refused form comes back with its
// errors next to the fields.
func (s *Server) notePost(c echo.Context) error {
	x, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	o := currentOwner(c)
	f := formOf(c, "type", "reply_to", "subject", "body")
	comp := views.Composer{SessionID: x.ID, Form: f, Open: true}
	in := store.OwnerNote{WorkspaceID: o.WorkspaceID, SessionID: x.ID, OwnerID: o.ID, Type: f.Value("type"),
		Subject: f.Value("subject"), Body: f.Value("body")}
	if in.Type == store.MessageReply {
		if comp.ReplyTo, err = s.replyTarget(c, x, int64Param(f.Value("reply_to"))); err != nil {
			return err
		}
		in.ReplyTo = comp.ReplyTo.ID
	}
	note, _, err := s.store.PostOwnerNote(ctx, in)
	if err != nil {
		if comp.Form.Errors, err = fieldErrors(err); err != nil {
			return err
		}
		if isHTMX(c) {
			c.Response().Header().Set("HX-Retarget", "#"+comp.ID())
			c.Response().Header().Set("HX-Reswap", "outerHTML")
			return s.render(c, http.StatusUnprocessableEntity, "", views.ComposerForm(comp))
		}
		return s.render(c, http.StatusUnprocessableEntity, "Write a note", views.ComposePage(comp))
	}
	if !isHTMX(c) {
		return redirect(c, fmt.Sprintf("/sessions/%d#note-%d", x.ID, note.ID))
	}
	rows, err := s.rowsAfter(ctx, o, x.ID, int64Param(c.FormValue("after")))
	if err != nil {
		return err
	}
	msg := "Note posted to the whole session."
	switch note.MessageType {
	case store.MessageReply:
		msg = "Reply sent to " + *note.RecipientSlug + "."
	case store.MessageAnalysis:
		msg = "Analysis note saved; only owners see it."
	}
	reset := views.Composer{SessionID: x.ID, ReplyTo: comp.ReplyTo, OOB: true}
	return s.render(c, http.StatusOK, "", views.PostedResponse(x.ID, rows, reset, msg))
}

func (s *Server) participantsPage(c echo.Context) error {
	return s.renderParticipants(c, http.StatusOK, views.Form{})
}

func (s *Server) renderParticipants(c echo.Context, status int, invite views.Form) error {
	x, p, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	v := views.ParticipantsView{Session: *x, Project: *p, Invite: invite}
	if v.Participants, err = s.store.ListParticipants(ctx, x.WorkspaceID, x.ID); err != nil {
		return err
	}
	if v.Invitable, err = s.store.ListInvitableConnections(ctx, x.WorkspaceID, x.ID); err != nil {
		return err
	}
	s.page(c).Nav = "projects"
	return s.render(c, status, "Participants · "+x.Title, views.ParticipantsPage(v))
}

func participantsURL(id int64) string { return fmt.Sprintf("/sessions/%d/participants", id) }

func (s *Server) invite(c echo.Context) error {
	x, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	f := formOf(c, "connection_id", "role")
	err = s.store.Invite(c.Request().Context(), x.WorkspaceID, x.ID, int64Param(f.Value("connection_id")), f.Value("role"))
	if errors.Is(err, store.ErrNotFound) {
		err = &store.FieldError{Field: "connection_id", Message: "choose a live connection of this workspace"}
	}
	if err != nil {
		if f.Errors, err = fieldErrors(err); err != nil {
			return err
		}
		return s.renderParticipants(c, http.StatusUnprocessableEntity, f)
	}
	return redirect(c, participantsURL(x.ID))
}

func (s *Server) inviteUpdate(c echo.Context) error {
	x, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	conn, err := paramID(c, "conn")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.store.InvitationRole(ctx, x.WorkspaceID, x.ID, conn); err != nil {
		return err
	}
	if err := s.store.Invite(ctx, x.WorkspaceID, x.ID, conn, c.FormValue("role")); err != nil {
		errs, err := fieldErrors(err)
		if err != nil {
			return err
		}
		return s.renderParticipants(c, http.StatusUnprocessableEntity, views.Form{Errors: errs})
	}
	return redirect(c, participantsURL(x.ID))
}

func (s *Server) inviteRemove(c echo.Context) error {
	x, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	conn, err := paramID(c, "conn")
	if err != nil {
		return err
	}
	if err := s.store.RemoveInvitation(c.Request().Context(), x.WorkspaceID, x.ID, conn); err != nil {
		return err
	}
	return redirect(c, participantsURL(x.ID))
}
