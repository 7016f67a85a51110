package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestDisplayNamesRefuseControlCharacters: an owner's display name and a
// connection's client name with a control character are refused with the
// field named; the names of people (accents, emoji) pass.
func TestDisplayNamesRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	for _, name := range []string{"Alice A\nFrom: Eve", "Alice\x1b]8;;https://evil.example\x07", "Alice\u202e"} {
		n := store.NewOwner{Email: "a@example.com", DisplayName: name, Password: "correct horse battery"}
		var fe *store.FieldError
		if err := n.Validate(); !errors.As(err, &fe) || fe.Field != "display_name" {
			t.Errorf("owner %q: %v", name, err)
		}
	}
	o, err := st.CreateOwner(ctx, store.NewOwner{Email: "a@example.com", DisplayName: "Ana María 🚀", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = st.CreateTokenConnection(ctx, store.NewConnection{WorkspaceID: o.WorkspaceID, OwnerID: o.ID, ClientName: "editor\nFrom: Ana", Scopes: store.AllScopes},
		"http://localhost/mcp", store.StaticTokenTTL)
	var fe *store.FieldError
	if !errors.As(err, &fe) || fe.Field != "client_name" {
		t.Fatalf("client name with a line break: %v", err)
	}
}
