package views

import (
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

func TestSessionTypeLabel(t *testing.T) {
	want := map[string]string{"agent_session": "Agent session", "team_session": "Team session", "loop_session": "Loop session"}
	if len(store.SessionTypes) != len(want) {
		t.Fatalf("session types %v: name each one's label here", store.SessionTypes)
	}
	for _, typ := range store.SessionTypes {
		if got := SessionTypeLabel(typ); got != want[typ] {
			t.Errorf("%s: %q, want %q", typ, got, want[typ])
		}
	}
	if got := SessionTypeLabel("graph_session"); got != "graph_session" {
		t.Errorf("unknown type: %q", got)
	}
}
