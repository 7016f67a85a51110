package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/live"
	"github.com/osfoundry/osfoundry/store"
)

// agentEvents is a bridge's relay stream (events in docs/claude-code.md): the
// notes after Last-Event-ID and those never seen, then what arrives, each once.
func (s *Server) agentEvents(c echo.Context) error {
	ti, err := s.agentToken(c)
	if err != nil || ti == nil {
		return err
	}
	ctx := c.Request().Context()
	st := s.relay.NewStream(ti.ConnectionID, ti.WorkspaceID)
	// Subscribed before the replay reads the database: a note committed
	// after that read is announced to this stream; one before, replayed.
	if err := s.relay.Subscribe(st); err != nil {
		return agentStreamsDown(err)
	}
	defer s.relay.Unsubscribe(st)
	var after int64
	if v, err := strconv.ParseInt(strings.TrimSpace(c.Request().Header.Get("Last-Event-ID")), 10, 64); err == nil && v > 0 {
		after = v
	}
	missed, err := s.store.RelayMail(ctx, ti.ConnectionID, after)
	if err != nil {
		return err
	}
	w, err := web.OpenStream(c)
	if err != nil {
		return nil
	}
	sent := map[int64]bool{}
	for i := range missed {
		ev, err := s.relayFrame(ctx, &missed[i])
		if err != nil {
			return nil
		}
		if err := w.Write(ev); err != nil {
			return nil
		}
		sent[missed[i].ID] = true
	}
	expiry := time.NewTimer(time.Until(ti.ExpiresAt))
	defer expiry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-expiry.C:
			_ = w.Write(live.Frame("expired", 0, agentMessage("the access token expired: reconnect with a fresh one")))
			return nil
		case <-st.Done():
			switch {
			case st.Revoked():
				_ = w.Write(live.Frame("revoked", 0, agentMessage("this connection was revoked: run `osfoundry agent login --server "+s.cfg.BaseURL+"` again")))
			case st.Replaced():
				_ = w.Write(live.Frame("replaced", 0, nil))
			}
			return nil
		case ev := <-st.Events():
			if ev.NoteID > 0 {
				if sent[ev.NoteID] {
					continue
				}
				sent[ev.NoteID] = true
			}
			if err := w.Write(ev.Data); err != nil {
				return nil
			}
		}
	}
}

// agentToken checks the bearer token as /mcp does (read scope); a refusal is
// written here and both results are nil.
func (s *Server) agentToken(c echo.Context) (*store.TokenInfo, error) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(c.Request().Header.Get("Authorization")), " ")
	challenge := `Bearer resource_metadata="` + s.cfg.BaseURL + `/.well-known/oauth-protected-resource/mcp", scope="` + store.ScopeRead + " " + store.ScopeWrite + `"`
	if !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		c.Response().Header().Set("WWW-Authenticate", challenge+`, error_description="Connect osFoundry to continue"`)
		return nil, c.JSON(http.StatusUnauthorized, map[string]string{"error": "a bearer token is required (the one /mcp takes)"})
	}
	ti, err := s.store.UseAccessToken(c.Request().Context(), strings.TrimSpace(token), s.cfg.BaseURL+"/mcp")
	if errors.Is(err, store.ErrNotFound) {
		c.Response().Header().Set("WWW-Authenticate", challenge+`, error="invalid_token"`)
		return nil, c.JSON(http.StatusUnauthorized, map[string]string{"error": "the token is invalid, expired or revoked"})
	}
	if err != nil {
		return nil, err
	}
	if !ti.HasScope(store.ScopeRead) {
		c.Response().Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+store.ScopeRead+`"`)
		return nil, c.JSON(http.StatusForbidden, map[string]string{"error": "the token lacks " + store.ScopeRead})
	}
	return ti, nil
}

// agentStreamsDown answers a refused stream with 503 or 429; the bridge retries.
func agentStreamsDown(err error) error {
	switch {
	case errors.Is(err, live.ErrDown):
		return echo.NewHTTPError(http.StatusServiceUnavailable, "the relay is unavailable for a moment; retry")
	case errors.Is(err, live.ErrTooMany):
		return echo.NewHTTPError(http.StatusTooManyRequests, "this server holds as many agent streams as it may; retry later")
	}
	return err
}

// agentMessage is the data of a revoked or expired event.
func agentMessage(msg string) []byte {
	b, _ := json.Marshal(map[string]string{"message": msg})
	return b
}

// relayNote is read_session_mail's fields and the note's session.
type relayNote struct {
	ID          int64     `json:"id"`
	SessionType string    `json:"session_type"`
	SessionID   string    `json:"session_id"`
	From        string    `json:"from"`
	FromName    string    `json:"from_name"`
	FromKind    string    `json:"from_kind"`
	To          *string   `json:"to"`
	MessageType string    `json:"message_type"`
	Subject     string    `json:"subject"`
	Body        string    `json:"body"`
	CreatedAt   time.Time `json:"created_at"`
	InReplyTo   *int64    `json:"in_reply_to,omitempty"`
	ForYou      bool      `json:"for_you"`
	Answers     *struct {
		QuestionID int64  `json:"question_id"`
		Question   string `json:"question"`
		Status     string `json:"status"`
	} `json:"answers,omitempty"`
}

// relayFrame frames a note, with the question it answers (or expired).
func (s *Server) relayFrame(ctx context.Context, n *store.RelayNote) ([]byte, error) {
	out := relayNote{ID: n.ID, SessionType: n.SessionType, SessionID: n.SessionPublicID, From: n.SenderSlug, FromName: n.SenderName,
		FromKind: n.FromKind(), To: n.RecipientSlug, MessageType: n.MessageType, Subject: n.Subject, Body: n.Body,
		CreatedAt: n.CreatedAt, InReplyTo: n.InReplyTo, ForYou: true}
	if n.InReplyTo != nil && !n.FromAgent() {
		qs, err := s.store.QuestionsOf(ctx, n.WorkspaceID, []int64{*n.InReplyTo})
		if err != nil {
			return nil, err
		}
		if q := qs[*n.InReplyTo]; q != nil && q.ClosedBy != nil && *q.ClosedBy == n.ID {
			out.Answers = &struct {
				QuestionID int64  `json:"question_id"`
				Question   string `json:"question"`
				Status     string `json:"status"`
			}{q.ID, q.Text, q.State}
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return live.Frame("note", n.ID, data), nil
}
