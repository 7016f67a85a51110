package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// answerLinkAnswer answers as the owner the link was mailed to and spends the
// link in the same transaction (store.AnswerByLink).
func (s *Server) answerLinkAnswer(c echo.Context) error {
	d, status, err := s.answerLink(c)
	if err != nil || !d.CanAnswer {
		if err == nil {
			err = s.renderAnswerLink(c, status, d)
		}
		return err
	}
	d.Text = c.FormValue("answer")
	q, err := s.store.AnswerByLink(c.Request().Context(), d.Token, d.Text)
	var closed *store.ErrClosed
	switch {
	case errors.As(err, &closed):
		// Answered meanwhile, on another page or through another link.
		d.CanAnswer, d.Question, d.Notice = false, closed.Question, closed.Error()+"."
		return s.renderAnswerLink(c, http.StatusConflict, d)
	case errors.Is(err, store.ErrLinkSpent), errors.Is(err, store.ErrLinkExpired), errors.Is(err, store.ErrLinkInvalid):
		// Spent or expired since it was read: say so as a fresh read does.
		d, status, err := s.answerLink(c)
		if err != nil {
			return err
		}
		return s.renderAnswerLink(c, status, d)
	case store.FieldErrorsOf(err) != nil:
		d.Error = store.FieldErrorsOf(err)[0].Message
		return s.renderAnswerLink(c, http.StatusUnprocessableEntity, d)
	case err != nil:
		return err
	}
	s.log.Info("question answered by link", "question_id", q.ID, "owner_id", d.Link.OwnerID)
	d.CanAnswer, d.Answered, d.Question = false, true, q
	return s.renderAnswerLink(c, http.StatusOK, d)
}
