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

// approvalLinkPage is GET /approve/:token, the page an Allow or Deny link
// of an approval's email opens: the approval and one button with the link's
// verdict. It never decides (mail scanners follow links); the button posts
// to approvalLinkDecide. A link that cannot decide says why: not valid
// (404), of another workspace than the one signed in to (403), used
// already or its approval no longer pending, naming who decided (409),
// expired (410).
func (s *Server) approvalLinkPage(c echo.Context) error {
	d, status, err := s.approvalLink(c)
	if err != nil {
		return err
	}
	return s.renderApprovalLink(c, status, d)
}

// approvalLink reads the link of the request's token into what its page
// shows, with the page's status.
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

// approvalLinkDecide is POST /approve/:token, the one click of an approval
// link's page: it decides as the owner the link was mailed to, with the
// link's verdict (and the reason given, for a denial), and spends the link
// in the same transaction (store.DecideByLink).
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

// renderApprovalLink shows an approval link's page; no referrer carries
// its token elsewhere.
func (s *Server) renderApprovalLink(c echo.Context, status int, d views.ApprovalLinkData) error {
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return web.Render(c, status, "Allow or deny", views.ApprovalLinkPage(d))
}
