package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// TestRemovalEndsSignInOnTheOtherReplica: a member signed in on replica B
// is removed by an admin on replica A; B stops signing them in as soon as
// it hears of it (the sign-in cache forgets the ended sign-ins), bounded,
// not after its cache's lifetime.
func TestRemovalEndsSignInOnTheOtherReplica(t *testing.T) {
	t.Parallel()
	rp := startReplicaPair(t, 1, startReplica)
	a, b, w := rp.a, rp.b, rp.w
	mia, err := w.st.CreateOwner(context.Background(), store.NewOwner{Email: "mia@example.com", DisplayName: "Mia",
		Password: ownerPassword, WorkspaceName: w.owner.WorkspaceName, Role: store.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	member := newOwnerBrowser(t, b.URL, &world{st: w.st, owner: mia})
	member.signIn()
	home := func() *http.Response {
		t.Helper()
		res, _, err := member.page("/")
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Twice: the second is answered from B's cache.
	for range 2 {
		if res := home(); res.StatusCode != http.StatusOK {
			t.Fatalf("the member on B before removal: %d", res.StatusCode)
		}
	}
	admin := newOwnerBrowser(t, a.URL, w)
	admin.signIn()
	_, doc, err := admin.page("/people")
	if err != nil {
		t.Fatal(err)
	}
	action := fmt.Sprintf("/people/%d/remove", mia.ID)
	res, err := admin.post(action, inputs(doc, fmt.Sprintf(`form[action=%q]`, action), false))
	if err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove on A: %v %v", err, res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res := home()
		if res.StatusCode == http.StatusSeeOther && strings.HasPrefix(res.Header.Get("Location"), "/login") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B still signs the removed member in 5 s after: %d", res.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
