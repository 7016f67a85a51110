package handlers

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
)

// maxDelivered bounds the notes one delivery report names.
const maxDelivered = 100

// agentDelivered records the notes the bridge put into the agent's context;
// only unread notes addressed to the connection count.
func (s *Server) agentDelivered(c echo.Context) error {
	ti, err := s.agentToken(c)
	if err != nil || ti == nil {
		return err
	}
	var in struct {
		NoteIDs []int64 `json:"note_ids"`
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, 64<<10))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return c.JSON(http.StatusBadRequest, map[string]string{"error": "note_ids: send a JSON object {\"note_ids\": [note ids]}"})
	}
	if len(in.NoteIDs) == 0 || len(in.NoteIDs) > maxDelivered {
		return c.JSON(http.StatusBadRequest, map[string]string{"error": "note_ids: name 1 to 100 notes"})
	}
	for _, id := range in.NoteIDs {
		if id < 1 {
			return c.JSON(http.StatusBadRequest, map[string]string{"error": "note_ids: each is a note id, 1 or more"})
		}
	}
	marked, err := s.store.MarkDelivered(c.Request().Context(), ti.ConnectionID, in.NoteIDs)
	if err != nil {
		return err
	}
	if marked == nil {
		marked = []int64{}
	}
	return c.JSON(http.StatusOK, map[string]any{"delivered": marked})
}
