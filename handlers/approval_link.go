package handlers

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// approvalLinkPage shows the approval and one button; the GET never decides,
// because mail scanners follow links.
func (s *Server) approvalLinkPage(c echo.Context) error {
	d, status, err := s.approvalLink(c)
	if err != nil {
		return err
	}
	return s.renderApprovalLink(c, status, d)
}

// approvalLink reads the token's link into its page, with the page's status.
func (s *Server) approvalLink(c echo.Context) (views.ApprovalLinkData, int, error) {
	d := views.ApprovalLinkData{Token: c.Param("token")}
	l, a, err := s.store.ApprovalLinkOf(c.Request().Context(), d.Token)
	switch {
	case errors.Is(err, store.ErrLinkInvalid):
		d.Notice = "This link is not valid. Copy the whole link from the email, or decide on the approval's page."
		return d, http.StatusNotFound, nil
	case err != nil && !errors.Is(err, store.ErrLinkSpent) && !errors.Is(err, store.ErrLinkExpired):
		return d, 0, err
	}
	if o := web.Owner(c); o != nil && o.WorkspaceID != l.WorkspaceID {
		return views.ApprovalLinkData{Token: d.Token, Notice: "This link belongs to another workspace than the one you are signed in to."},
			http.StatusForbidden, nil
	}
	d.Link, d.Approval = l, a
	switch {
	case !a.Pending() || !a.ExpiresAt.After(time.Now()):
		if a.Pending() {
			a.State = store.ApprovalExpired
		}
		noticeClosed(&d, a)
		return d, http.StatusConflict, nil
	case errors.Is(err, store.ErrLinkSpent):
		d.Notice = "This link was used already."
		return d, http.StatusConflict, nil
	case errors.Is(err, store.ErrLinkExpired):
		d.Notice = "This link has expired."
		return d, http.StatusGone, nil
	}
	d.CanDecide = true
	return d, http.StatusOK, nil
}

// noticeClosed says on the page who decided the approval, or how it ended.
func noticeClosed(d *views.ApprovalLinkData, a *store.Approval) {
	d.Notice = (&store.ErrApprovalClosed{Approval: a}).Error() + "."
}

// approvalLinkDecide decides as the owner the link was mailed to and spends
// the link in the same transaction (store.DecideByLink).
func (s *Server) approvalLinkDecide(c echo.Context) error {
	d, status, err := s.approvalLink(c)
	if err != nil || !d.CanDecide {
		if err == nil {
			err = s.renderApprovalLink(c, status, d)
		}
		return err
	}
	a, err := s.store.DecideByLink(c.Request().Context(), d.Token, c.FormValue("reason"), c.RealIP())
	var closed *store.ErrApprovalClosed
	switch {
	case errors.As(err, &closed):
		d.CanDecide, d.Approval = false, closed.Approval
		noticeClosed(&d, closed.Approval)
		return s.renderApprovalLink(c, http.StatusConflict, d)
	case errors.Is(err, store.ErrLinkSpent), errors.Is(err, store.ErrLinkExpired), errors.Is(err, store.ErrLinkInvalid):
		d, status, err := s.approvalLink(c)
		if err != nil {
			return err
		}
		return s.renderApprovalLink(c, status, d)
	case store.FieldErrorsOf(err) != nil:
		d.Error = store.FieldErrorsOf(err)[0].Message
		return s.renderApprovalLink(c, http.StatusUnprocessableEntity, d)
	case err != nil:
		return err
	}
	s.log.Info("approval decided by link", "approval_id", a.ID, "owner_id", d.Link.OwnerID, "state", a.State)
	d.CanDecide, d.Decided, d.Approval = false, true, a
	return s.renderApprovalLink(c, http.StatusOK, d)
}

// renderApprovalLink shows the page; no referrer carries the token.
func (s *Server) renderApprovalLink(c echo.Context, status int, d views.ApprovalLinkData) error {
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return web.Render(c, status, "Allow or deny", views.ApprovalLinkPage(d))
}
