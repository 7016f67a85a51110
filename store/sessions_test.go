package store_test

import (
	"errors"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

func TestNewSessionNamesTheSessionTypes(t *testing.T) {
	t.Parallel()
	n := store.NewSession{Type: "graph_session", Title: "T"}
	var fe *store.FieldError
	if err := n.Validate(); !errors.As(err, &fe) || fe.Field != "session_type" || fe.Message != "choose agent_session, team_session or loop_session" {
		t.Fatalf("unknown type: %v", err)
	}
	for _, typ := range store.SessionTypes {
		n := store.NewSession{Type: typ, Title: "T"}
		if err := n.Validate(); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
}
