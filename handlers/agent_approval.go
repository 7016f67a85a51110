package handlers

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// The agent side of approvals (SPEC §17): the PermissionRequest hook creates an
// approval with the bearer token, then long-polls for the decision.

// maxApprovalPoll bounds one long poll; the hook polls again until its wait ends.
const maxApprovalPoll = 60 * time.Second

// agentApproval is an approval as the hook reads it.
type agentApproval struct {
	ID          int64     `json:"id"`
	State       string    `json:"state"`
	Reason      string    `json:"reason,omitempty"`
	DecidedBy   string    `json:"decided_by,omitempty"`
	ExpiresAt   time.Time `json:"expires_at"`
	WaitSeconds int       `json:"wait_seconds"`
}

func agentApprovalOf(a *store.Approval) agentApproval {
	wait := int(time.Until(a.ExpiresAt).Round(time.Second) / time.Second)
	return agentApproval{ID: a.ID, State: a.State, Reason: a.Reason, DecidedBy: a.DecidedBy, ExpiresAt: a.ExpiresAt, WaitSeconds: max(wait, 0)}
}

// agentError is the JSON of a refusal: what to fix, and the field.
type agentError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

// agentCaller checks the bearer token (write scope); a refusal is answered here
// and ok is false.
func (s *Server) agentCaller(c echo.Context) (ti *store.TokenInfo, ok bool, err error) {
	h := c.Request().Header.Get("Authorization")
	token, found := strings.CutPrefix(h, "Bearer ")
	if !found || token == "" {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="osfoundry"`)
		return nil, false, c.JSON(http.StatusUnauthorized, agentError{Error: "send the connection's access token as a bearer token"})
	}
	ti, err = s.store.UseAccessToken(c.Request().Context(), token, s.cfg.BaseURL+"/mcp")
	if errors.Is(err, store.ErrNotFound) {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="osfoundry", error="invalid_token"`)
		return nil, false, c.JSON(http.StatusUnauthorized, agentError{Error: "the access token is unknown, expired or revoked"})
	}
	if err != nil {
		return nil, false, err
	}
	if !ti.HasScope(store.ScopeWrite) {
		return nil, false, c.JSON(http.StatusForbidden, agentError{Error: "the connection lacks the " + store.ScopeWrite + " scope"})
	}
	return ti, true, nil
}

// approvalRequest is the body of POST /agent/approvals.
type approvalRequest struct {
	Tool          string `json:"tool"`
	Summary       string `json:"summary"`
	Repo          string `json:"repo"`
	Branch        string `json:"branch"`
	ClientSession string `json:"client_session"`
}

// agentApprovalCreate asks the owners: 201, or 200 with state "off" when the
// project takes no approvals.
func (s *Server) agentApprovalCreate(c echo.Context) error {
	ti, ok, err := s.agentCaller(c)
	if !ok {
		return err
	}
	var in approvalRequest
	if err := json.NewDecoder(io.LimitReader(c.Request().Body, 64<<10)).Decode(&in); err != nil {
		return c.JSON(http.StatusBadRequest, agentError{Error: "send a JSON object: tool, summary, repo, branch, client_session"})
	}
	a, err := s.store.RequestApproval(c.Request().Context(), store.ApprovalRequest{WorkspaceID: ti.WorkspaceID, ConnectionID: ti.ConnectionID,
		Tool: in.Tool, Summary: in.Summary, Repo: in.Repo, Branch: in.Branch, ClientSession: in.ClientSession})
	var fe *store.FieldError
	switch {
	case errors.Is(err, store.ErrApprovalsOff):
		return c.JSON(http.StatusOK, map[string]string{"state": "off"})
	case errors.As(err, &fe):
		return c.JSON(http.StatusUnprocessableEntity, agentError{Error: fe.Message, Field: fe.Field})
	case errors.Is(err, store.ErrNotFound):
		return c.JSON(http.StatusUnauthorized, agentError{Error: "the connection was revoked"})
	case err != nil:
		return err
	}
	return c.JSON(http.StatusCreated, agentApprovalOf(a))
}

// agentApprovalWait answers once the approval is decided, or after ?wait=
// (at most maxApprovalPoll).
func (s *Server) agentApprovalWait(c echo.Context) error {
	ti, ok, err := s.agentCaller(c)
	if !ok {
		return err
	}
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return c.JSON(http.StatusNotFound, agentError{Error: "no such approval"})
	}
	wait := maxApprovalPoll
	if v := c.QueryParam("wait"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c.JSON(http.StatusBadRequest, agentError{Error: "wait: use a number of seconds", Field: "wait"})
		}
		wait = min(time.Duration(n)*time.Second, maxApprovalPoll)
	}
	ctx := c.Request().Context()
	w := s.approvals.Watch(id)
	defer w.Stop()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		// Looked at after the wait began, so no decision falls between.
		a, err := s.store.AgentApproval(ctx, ti.WorkspaceID, ti.ConnectionID, id)
		if errors.Is(err, store.ErrNotFound) {
			return c.JSON(http.StatusNotFound, agentError{Error: "no such approval of this connection"})
		}
		if err != nil {
			return err
		}
		if a.Pending() && !a.ExpiresAt.After(time.Now()) {
			if a, err = s.store.EndApproval(ctx, ti.WorkspaceID, ti.ConnectionID, id, store.ApprovalExpired); err != nil {
				return err
			}
		}
		if !a.Pending() {
			return c.JSON(http.StatusOK, agentApprovalOf(a))
		}
		expiry := time.NewTimer(time.Until(a.ExpiresAt))
		select {
		case <-w.C:
		case <-expiry.C:
		case <-deadline.C:
			expiry.Stop()
			return c.JSON(http.StatusOK, agentApprovalOf(a))
		case <-s.approvals.Ending():
			expiry.Stop()
			return c.JSON(http.StatusOK, agentApprovalOf(a))
		case <-ctx.Done():
			expiry.Stop()
			return nil
		}
		expiry.Stop()
	}
}

// agentApprovalEnd ends a pending approval as "terminal" or "expired"; a
// decided one keeps its decision.
func (s *Server) agentApprovalEnd(c echo.Context) error {
	ti, ok, err := s.agentCaller(c)
	if !ok {
		return err
	}
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return c.JSON(http.StatusNotFound, agentError{Error: "no such approval"})
	}
	var in struct {
		State string `json:"state"`
	}
	if err := json.NewDecoder(io.LimitReader(c.Request().Body, 4<<10)).Decode(&in); err != nil {
		return c.JSON(http.StatusBadRequest, agentError{Error: `send {"state": "terminal"} or {"state": "expired"}`})
	}
	a, err := s.store.EndApproval(c.Request().Context(), ti.WorkspaceID, ti.ConnectionID, id, in.State)
	var fe *store.FieldError
	switch {
	case errors.As(err, &fe):
		return c.JSON(http.StatusUnprocessableEntity, agentError{Error: fe.Message, Field: fe.Field})
	case errors.Is(err, store.ErrNotFound):
		return c.JSON(http.StatusNotFound, agentError{Error: "no such approval of this connection"})
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, agentApprovalOf(a))
}

// agentApprovalSettings is what an approval of the connection would get now
// (install writes the wait as the hook's timeout).
func (s *Server) agentApprovalSettings(c echo.Context) error {
	ti, ok, err := s.agentCaller(c)
	if !ok {
		return err
	}
	a, err := s.store.ConnectionApprovalSettings(c.Request().Context(), ti.WorkspaceID, ti.ConnectionID)
	if errors.Is(err, store.ErrNotFound) {
		return c.JSON(http.StatusUnauthorized, agentError{Error: "the connection was revoked"})
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"enabled": a.Enabled, "wait_seconds": a.WaitSeconds, "delay_minutes": a.DelayMinutes})
}
