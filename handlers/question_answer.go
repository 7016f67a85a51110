package handlers

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// questionAnswer answers a question with an option or words; the first answer
// wins and a later one gets 409. The service worker asks for JSON.
func (s *Server) questionAnswer(c echo.Context) error {
	session, _, err := s.sessionOf(c)
	if err != nil {
		return err
	}
	id, err := web.ParamID(c, "note")
	if err != nil {
		return err
	}
	o := web.Owner(c)
	in := store.Answer{WorkspaceID: o.WorkspaceID, OwnerID: o.ID, QuestionID: id, SessionID: session.ID, Text: c.FormValue("answer"),
		RemoteAddr: c.RealIP(), UserAgent: c.Request().UserAgent()}
	if v := c.FormValue("option"); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil {
			return echo.NewHTTPError(http.StatusUnprocessableEntity, "Choose one of the question's options.")
		}
		in.Option = &i
	}
	q, err := s.store.AnswerQuestion(c.Request().Context(), in)
	status, notice := http.StatusOK, ""
	var closed *store.ErrClosed
	switch {
	case errors.As(err, &closed):
		q, status, notice = closed.Question, http.StatusConflict, closed.Error()
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, "No such question in this session")
	case store.FieldErrorsOf(err) != nil:
		notice = store.FieldErrorsOf(err)[0].Message
		if q, err = s.store.OwnerQuestion(c.Request().Context(), o.WorkspaceID, id); err != nil {
			return err
		}
		status = http.StatusUnprocessableEntity
	case err != nil:
		return err
	}
	if c.Request().Header.Get("Accept") == "application/json" {
		// The service worker, answering from a notification's action.
		return c.JSON(status, map[string]string{"state": q.State, "answer": q.Answer, "answered_by": q.AnsweredBy, "notice": notice})
	}
	if !web.IsHTMX(c) && status == http.StatusOK {
		if c.QueryParam("back") == "inbox" {
			return web.Redirect(c, "/inbox")
		}
		return web.Redirect(c, views.NoteURL(session.ID, id))
	}
	if !web.IsHTMX(c) {
		return web.Render(c, status, "Question", views.QuestionAnswerPage(session.ID, *q, notice, c.QueryParam("back")))
	}
	return web.Render(c, status, "Question", views.QuestionBox(session.ID, *q, notice, "", false))
}
