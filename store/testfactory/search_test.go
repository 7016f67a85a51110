package testfactory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/testfactory"
)

func TestCorpusIsTheOwnersMail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, pool := openStore(t)
	owner, err := st.CreateOwner(ctx, store.NewOwner{Email: "corpus@example.com", DisplayName: "Corpus owner", Password: "a fixture password", WorkspaceName: "corpus"})
	if err != nil {
		t.Fatal(err)
	}
	ws := owner.WorkspaceID
	project, err := st.CreateProject(ctx, ws, "Corpus")
	if err != nil {
		t.Fatal(err)
	}
	var sessions []int64
	for i := range 3 {
		s, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: project.ID, Type: "team_session", Title: fmt.Sprintf("Corpus %d", i), CreatedBy: owner.ID})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s.ID)
	}
	var agents []*store.Profile
	for i := range 2 {
		conn, err := st.CreateConnection(ctx, store.NewConnection{WorkspaceID: ws, OwnerID: owner.ID, ClientName: "corpus", Scopes: store.AllScopes, ProjectIDs: []int64{project.ID}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := st.ClaimProfile(ctx, ws, conn.ID, fmt.Sprintf("corpus-%d", i), fmt.Sprintf("Corpus agent %d", i))
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, p)
	}
	const notes = 400
	if err := testfactory.Corpus(ctx, pool, testfactory.CorpusOpts{WorkspaceID: ws, OwnerID: owner.ID, OwnerName: owner.DisplayName,
		Sessions: sessions, Agents: agents, Notes: notes, Rare: "zebracorn", Medium: "orders_total", Common: "deploy"}); err != nil {
		t.Fatal(err)
	}
	total, common, medium := 0, 0, 0
	for _, id := range sessions {
		for _, n := range ownersMail(t, st, ws, id) {
			total++
			if n.SenderKind == store.SenderOwner && n.SenderSlug != store.OwnerSlug(owner.ID) {
				t.Fatalf("owner's note %d from %q, want %q", n.ID, n.SenderSlug, store.OwnerSlug(owner.ID))
			}
			if strings.HasSuffix(n.Body, " deploy") {
				common++
			}
			if strings.Contains(n.Body, " orders_total rounds") {
				medium++
			}
		}
	}
	// Three in ten carry the common word, one in 100 the medium phrase.
	if total != notes || common != notes*3/10 || medium != notes/100 {
		t.Fatalf("%d notes, %d with the common word, %d with the medium phrase; want %d, %d, %d", total, common, medium, notes, notes*3/10, notes/100)
	}
}
