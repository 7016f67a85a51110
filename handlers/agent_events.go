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

// agentEvents is an agent's relay (GET /agent/events, text/event-stream):
// one per running bridge (`osfoundry agent mcp`), authenticated with the
// bearer token of /mcp (read scope). Its events:
//
//   - note: a note addressed to the connection (an owner's note to its
//     session, a reply to its slug, the answer to its question), the moment
//     it is posted on any replica; id = the note id, data = the note as JSON
//     (relayNote).
//   - revoked: the connection was revoked; the stream ends.
//   - expired: the token expired; the stream ends (reconnect with a fresh
//     token and Last-Event-ID).
//   - replaced: newer streams of the connection took its place; it ends.
//
// Other names may come (a bridge ignores what it does not know). On
// connect it sends the notes after Last-Event-ID and those the agent has
// not seen at all (store.RelayMail), oldest first, then what arrives; a
// note is sent once per stream. A comment line every heartbeat.
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

// agentToken checks the request's bearer token as /mcp does (for the read
// scope). A refusal is written here (401 or 403 with the challenge /mcp
// sends) and both results are nil.
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

// agentStreamsDown answers a stream the relay refused: 503 while it is
// down, 429 when the replica holds as many as it may; the bridge retries.
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

// relayNote is a note as the relay carries it: read_session_mail's fields
// (the agent side reads both the same way) and the session it is in.
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

// relayFrame frames a note's event: the note, and, for the answer to the
// agent's question (or the notice that it expired), the question.
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
