package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/oauth"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

const consentTitle = "Connect osFoundry"

// authorizeForm is GET /authorize: it validates the request, sends a
// signed-out owner to sign in (and back here), and shows the consent page.
func (s *Server) authorizeForm(c echo.Context) error {
	ar, err := s.oauth.ParseAuthorizeRequest(c.Request().Context(), c.QueryParams(), c.RealIP())
	if err != nil {
		return s.authorizeFailed(c, err)
	}
	return s.requireOwner(func(c echo.Context) error {
		projects, err := s.store.ListProjects(c.Request().Context(), currentOwner(c).WorkspaceID)
		if err != nil {
			return err
		}
		return s.renderConsent(c, http.StatusOK, ar, projects, nil, "")
	})(c)
}

// authorizeSubmit is POST /authorize: the owner's Approve or Deny.
func (s *Server) authorizeSubmit(c echo.Context) error {
	ctx := c.Request().Context()
	q := url.Values{}
	for _, k := range oauth.AuthorizeParams {
		if v := c.FormValue(k); v != "" {
			q.Set(k, v)
		}
	}
	ar, err := s.oauth.ParseAuthorizeRequest(ctx, q, c.RealIP())
	if err != nil {
		return s.authorizeFailed(c, err)
	}
	o := currentOwner(c)
	if o == nil {
		return redirect(c, "/login?next="+url.QueryEscape("/authorize?"+q.Encode()))
	}
	if c.FormValue("decision") != "approve" {
		s.log.Info("oauth grant denied", "client_id", ar.Client.ClientID, "owner_id", o.ID)
		return c.Redirect(http.StatusSeeOther, s.oauth.Deny(ar))
	}
	form, _ := c.FormParams()
	selected := map[int64]bool{}
	var projectIDs []int64
	for _, v := range form["project"] {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, "That project choice is not valid.")
		}
		if !selected[id] {
			selected[id] = true
			projectIDs = append(projectIDs, id)
		}
	}
	target, err := s.oauth.Approve(ctx, ar, oauth.Approval{Owner: o, Scopes: form["grant"], ProjectIDs: projectIDs})
	var fe *store.FieldError
	switch {
	case errors.As(err, &fe), errors.Is(err, store.ErrNotFound):
		msg := "One of the chosen projects no longer exists. Choose again."
		if fe != nil {
			msg = "Choose at least one permission to approve, or Deny."
		}
		projects, perr := s.store.ListProjects(ctx, o.WorkspaceID)
		if perr != nil {
			return perr
		}
		return s.renderConsent(c, http.StatusUnprocessableEntity, ar, projects, selected, msg)
	case err != nil:
		return err
	}
	return c.Redirect(http.StatusSeeOther, target)
}

// authorizeFailed shows an authorization error as a page when the redirect
// target is in doubt, and sends it back to the client otherwise.
func (s *Server) authorizeFailed(c echo.Context, err error) error {
	var ae *oauth.AuthorizeError
	if !errors.As(err, &ae) {
		return err
	}
	if ae.Redirectable() {
		status := http.StatusFound
		if c.Request().Method == http.MethodPost {
			status = http.StatusSeeOther
		}
		return c.Redirect(status, s.oauth.ErrorRedirect(ae))
	}
	s.log.Info("authorization request refused", "error", ae.Code, "description", ae.Description)
	return s.render(c, http.StatusBadRequest, "Connection request not valid", views.AuthorizeErrorPage(ae.Description))
}

// renderConsent shows the consent page for ar. The page's form may be
// redirected to the client's redirect URI, whatever its scheme.
func (s *Server) renderConsent(c echo.Context, status int, ar *oauth.AuthRequest, projects []store.Project, selected map[int64]bool, msg string) error {
	f := views.ConsentForm{
		ClientName:       ar.ClientName(),
		ClientID:         ar.Client.ClientID,
		MetadataDocument: ar.Client.IsMetadataDocument,
		RedirectHost:     ar.RedirectHost(),
		RedirectURI:      ar.RedirectURI,
		Projects:         projects,
		Selected:         selected,
		Error:            msg,
	}
	if f.Selected == nil {
		f.Selected = map[int64]bool{}
	}
	for _, k := range oauth.AuthorizeParams {
		if v := ar.Params.Get(k); v != "" {
			f.Hidden = append(f.Hidden, views.HiddenField{Name: k, Value: v})
		}
	}
	for _, sc := range ar.Scopes {
		f.Scopes = append(f.Scopes, views.ConsentScope{
			Value:       sc,
			Title:       views.ScopeTitle(sc),
			Description: views.ScopeDescription(sc),
			Optional:    sc == store.ScopeWrite && len(ar.Scopes) > 1,
			Checked:     true,
		})
	}
	if scheme := ar.RedirectScheme(); scheme != "" && !slices.Contains([]string{"http", "https"}, scheme) {
		h := c.Response().Header()
		if csp := h.Get("Content-Security-Policy"); csp != "" {
			h.Set("Content-Security-Policy", strings.Replace(csp, "form-action 'self' http: https:", "form-action 'self' http: https: "+scheme+":", 1))
		}
	}
	return s.render(c, status, consentTitle, views.ConsentPage(f))
}
