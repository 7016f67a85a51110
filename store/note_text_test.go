package store_test

import (
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// TestNoteTextIsOneRule: an agent's note and an owner's are held to the same
// limits, worded the same.
func TestNoteTextIsOneRule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, subject, body string }{
		{"subject too long", strings.Repeat("s", store.MaxSubjectLen+1), "b"},
		{"body too long", "s", strings.Repeat("b", store.MaxBodyLen+1)},
	} {
		agent := store.AgentNote{Subject: c.subject, Body: c.body, IdempotencyKey: "k"}.Validate()
		owner := (&store.OwnerNote{Type: store.MessageNote, Subject: c.subject, Body: c.body}).Validate()
		if agent == nil || owner == nil || agent.Error() != owner.Error() {
			t.Errorf("%s: agent %v, owner %v", c.name, agent, owner)
		}
	}
	if err := (store.AgentNote{Subject: "s", Body: "b", IdempotencyKey: "k"}).Validate(); err != nil {
		t.Errorf("a note within the limits: %v", err)
	}
}
