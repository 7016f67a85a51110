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
	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

const consentTitle = "Connect osFoundry"

// authorizeForm validates the request, sends a signed-out owner to sign in,
// and shows the consent page.
func (s *Server) authorizeForm(c echo.Context) error {
	ar, err := s.oauth.ParseAuthorizeRequest(c.Request().Context(), c.QueryParams(), c.RealIP())
	if err != nil {
		return s.authorizeFailed(c, err)
	}
	return s.requireOwner(func(c echo.Context) error {
		choice := consentChoice{agent: "", projects: map[int64]bool{}, invite: map[int64]bool{}}
		return s.renderConsent(c, http.StatusOK, ar, choice, "")
	})(c)
}

// consentChoice is the owner's choice: the agent ("" before any), projects, sessions.
type consentChoice struct {
	agent    string
	projects map[int64]bool
	invite   map[int64]bool
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
	o := web.Owner(c)
	if o == nil {
		return web.Redirect(c, "/login?next="+url.QueryEscape("/authorize?"+q.Encode()))
	}
	if c.FormValue("decision") != "approve" {
		s.log.Info("oauth grant denied", "client_id", ar.Client.ClientID, "owner_id", o.ID)
		return c.Redirect(http.StatusSeeOther, s.oauth.Deny(ar))
	}
	form, _ := c.FormParams()
	choice := consentChoice{agent: c.FormValue("agent"), projects: map[int64]bool{}, invite: map[int64]bool{}}
	projectIDs, ok := formIDs(form["project"], choice.projects)
	if !ok {
		return echo.NewHTTPError(http.StatusBadRequest, "That project choice is not valid.")
	}
	sessionIDs, ok := formIDs(form["invite"], choice.invite)
	if !ok {
		return echo.NewHTTPError(http.StatusBadRequest, "That session choice is not valid.")
	}
	ap := oauth.Approval{Owner: o, Scopes: form["grant"], ProjectIDs: projectIDs, InviteSessionIDs: sessionIDs,
		RemoteAddr: c.RealIP(), UserAgent: c.Request().UserAgent()}
	switch choice.agent {
	case views.AgentNew:
	case "":
		return s.renderConsent(c, http.StatusUnprocessableEntity, ar, choice, "Choose which agent this is: one of yours signing in again, or a new agent.")
	default:
		if ap.Continue, err = strconv.ParseInt(choice.agent, 10, 64); err != nil || ap.Continue <= 0 {
			return echo.NewHTTPError(http.StatusBadRequest, "That agent choice is not valid.")
		}
	}
	target, err := s.oauth.Approve(ctx, ar, ap)
	var fe *store.FieldError
	switch {
	case errors.Is(err, store.ErrNotContinuable):
		return s.renderConsent(c, http.StatusUnprocessableEntity, ar, choice, "That agent cannot sign in again with this client. Choose one listed, or connect as a new agent.")
	case errors.As(err, &fe) && fe.Field == "scope":
		return s.renderConsent(c, http.StatusUnprocessableEntity, ar, choice, "Choose at least one permission to approve, or Deny.")
	case errors.As(err, &fe):
		return s.renderConsent(c, http.StatusUnprocessableEntity, ar, choice, "This client cannot be connected: its "+fe.Error()+".")
	case errors.Is(err, store.ErrNotFound):
		return s.renderConsent(c, http.StatusUnprocessableEntity, ar, choice, "One of the chosen projects no longer exists. Choose again.")
	case err != nil:
		return err
	}
	return c.Redirect(http.StatusSeeOther, target)
}

// formIDs parses a repeated id field, de-duplicated; ok is false on a non-id.
func formIDs(values []string, seen map[int64]bool) (ids []int64, ok bool) {
	for _, v := range values {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, false
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, true
}

// authorizeFailed shows the error as a page when the redirect target is in
// doubt, and sends it to the client otherwise.
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
	return web.Render(c, http.StatusBadRequest, "Connection request not valid", views.AuthorizeErrorPage(ae.Description))
}

// renderConsent shows the consent page. Its form may redirect to the client's
// redirect URI, whatever its scheme.
func (s *Server) renderConsent(c echo.Context, status int, ar *oauth.AuthRequest, choice consentChoice, msg string) error {
	ctx := c.Request().Context()
	o := web.Owner(c)
	projects, err := s.store.ListProjects(ctx, o.WorkspaceID)
	if err != nil {
		return err
	}
	agents, err := s.store.ListContinuableConnections(ctx, o.WorkspaceID, o.ID, ar.Client.ClientID)
	if err != nil {
		return err
	}
	sessions, err := s.store.ListProjectSessions(ctx, o.WorkspaceID)
	if err != nil {
		return err
	}
	if choice.agent == "" && status == http.StatusOK {
		// Preselect the agent this registration already is, revoked too: the same
		// checkout signing in again is that agent coming back.
		choice.agent = views.AgentNew
		if len(agents) > 0 && agents[0].Held {
			choice.agent = strconv.FormatInt(agents[0].ID, 10)
		}
		if len(projects) == 1 {
			choice.projects[projects[0].ID] = true
		}
		for id := range choice.projects {
			if ss := sessions[id]; len(ss) == 1 {
				choice.invite[ss[0].ID] = true
			}
		}
	}
	f := views.ConsentForm{
		ClientName:       ar.ClientName(),
		ClientID:         ar.Client.ClientID,
		MetadataDocument: ar.Client.IsMetadataDocument,
		RedirectHost:     ar.RedirectHost(),
		RedirectURI:      ar.RedirectURI,
		Agents:           agents,
		Agent:            choice.agent,
		Projects:         projects,
		Selected:         choice.projects,
		Sessions:         sessions,
		Invited:          choice.invite,
		Error:            msg,
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
	return web.Render(c, status, consentTitle, views.ConsentPage(f))
}
