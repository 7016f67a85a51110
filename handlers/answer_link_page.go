package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// answerLinkPage shows the question and one button; the GET never answers,
// because mail scanners follow links.
func (s *Server) answerLinkPage(c echo.Context) error {
	d, status, err := s.answerLink(c)
	if err != nil {
		return err
	}
	return s.renderAnswerLink(c, status, d)
}

// answerLink reads the token's link into its page, with the page's status.
func (s *Server) answerLink(c echo.Context) (views.AnswerLinkData, int, error) {
	ctx := c.Request().Context()
	d := views.AnswerLinkData{Token: c.Param("token")}
	l, q, err := s.store.AnswerLinkOf(ctx, d.Token)
	switch {
	case errors.Is(err, store.ErrLinkInvalid):
		d.Notice = "This answer link is not valid. Copy the whole link from the email, or answer on the question's session page."
		return d, http.StatusNotFound, nil
	case err != nil && !errors.Is(err, store.ErrLinkSpent) && !errors.Is(err, store.ErrLinkExpired):
		return d, 0, err
	}
	if o := web.Owner(c); o != nil && o.WorkspaceID != l.WorkspaceID {
		return views.AnswerLinkData{Token: d.Token, Notice: "This answer link belongs to another workspace than the one you are signed in to. " +
			"Open it where you are signed in to that workspace, or signed out."}, http.StatusForbidden, nil
	}
	d.Link, d.Question = l, q
	if err := s.describeQuestion(c, &d); err != nil {
		return d, 0, err
	}
	status := http.StatusOK
	switch {
	case errors.Is(err, store.ErrLinkSpent):
		status, d.Notice = http.StatusConflict, "This link was used already."
		if q.State == store.QuestionAnswered {
			d.Notice += " " + (&store.ErrClosed{Question: q}).Error() + "."
		}
	case !q.Open():
		status, d.Notice = http.StatusConflict, (&store.ErrClosed{Question: q}).Error()+"."
	case errors.Is(err, store.ErrLinkExpired):
		status, d.Notice = http.StatusGone, "This link has expired (links work for 24 hours). The question is still open: answer it on its session page."
	default:
		d.CanAnswer = true
	}
	if o := web.Owner(c); o != nil && o.ID != l.OwnerID {
		d.SignedInAs = o.DisplayName
	}
	return d, status, nil
}

// describeQuestion fills in where the question was asked and by whom.
func (s *Server) describeQuestion(c echo.Context, d *views.AnswerLinkData) error {
	ctx := c.Request().Context()
	ws, q := d.Link.WorkspaceID, d.Question
	session, err := s.store.GetSession(ctx, ws, q.SessionID)
	if err != nil {
		return err
	}
	p, err := s.store.GetProject(ctx, ws, session.ProjectID)
	if err != nil {
		return err
	}
	n, err := s.store.GetSessionNote(ctx, ws, session.ID, q.ID)
	if err != nil {
		return err
	}
	d.Session, d.Project, d.Asker = session.Title, p.Name, n.SenderName
	return nil
}

// renderAnswerLink shows the page; no referrer or cache keeps the token.
func (s *Server) renderAnswerLink(c echo.Context, status int, d views.AnswerLinkData) error {
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return web.Render(c, status, "Answer a question", views.AnswerLinkPage(d))
}
