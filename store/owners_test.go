package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestCreateFirstOwnerAndAuthenticate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)

	has, err := st.HasOwner(ctx)
	if err != nil || has {
		t.Fatalf("fresh install has owner=%v err=%v", has, err)
	}
	o, err := st.CreateFirstOwner(ctx, store.NewOwner{Email: "  Ada@Example.COM ", DisplayName: "Ada", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Email != "ada@example.com" || o.WorkspaceID == 0 || o.WorkspaceName == "" {
		t.Fatalf("owner = %+v", o)
	}
	if _, err := st.CreateFirstOwner(ctx, store.NewOwner{Email: "b@example.com", DisplayName: "B", Password: "long enough password"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second first owner: want ErrConflict, got %v", err)
	}

	tests := []struct {
		name, email, password string
		ok                    bool
	}{
		{"exact", "ada@example.com", "long enough password", true},
		{"case-insensitive email", "ADA@example.Com", "long enough password", true},
		{"wrong password", "ada@example.com", "long enough passworD", false},
		{"unknown email", "nobody@example.com", "long enough password", false},
		{"empty", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := st.Authenticate(ctx, tc.email, tc.password)
			if tc.ok {
				if err != nil || got.ID != o.ID {
					t.Fatalf("got %+v, %v", got, err)
				}
				return
			}
			if !errors.Is(err, store.ErrInvalidCredentials) {
				t.Fatalf("want ErrInvalidCredentials, got %v", err)
			}
		})
	}
}

func TestCreateFirstOwnerRaceCreatesOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.CreateFirstOwner(ctx, store.NewOwner{Email: "o" + string(rune('a'+i)) + "@example.com", DisplayName: "O", Password: "long enough password"})
			if err == nil {
				mu.Lock()
				created++
				mu.Unlock()
			} else if !errors.Is(err, store.ErrConflict) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if created != 1 {
		t.Fatalf("created %d first owners, want 1", created)
	}
}

func TestNewOwnerValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	tests := []struct {
		name  string
		in    store.NewOwner
		field string
	}{
		{"bad email", store.NewOwner{Email: "not-an-email", DisplayName: "A", Password: "long enough password"}, "email"},
		{"no name", store.NewOwner{Email: "a@example.com", DisplayName: "  ", Password: "long enough password"}, "display_name"},
		{"long name", store.NewOwner{Email: "a@example.com", DisplayName: string(make([]rune, 81)), Password: "long enough password"}, "display_name"},
		{"short password", store.NewOwner{Email: "a@example.com", DisplayName: "A", Password: "123456789"}, "password"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := st.CreateOwner(ctx, tc.in)
			var fe *store.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("want field error on %s, got %v", tc.field, err)
			}
		})
	}
	if _, err := st.CreateOwner(ctx, store.NewOwner{Email: "a@example.com", DisplayName: "A", Password: "long enough password"}); err != nil {
		t.Fatal(err)
	}
	_, err := st.CreateOwner(ctx, store.NewOwner{Email: "A@EXAMPLE.COM", DisplayName: "A2", Password: "long enough password"})
	var fe *store.FieldError
	if !errors.As(err, &fe) || fe.Field != "email" {
		t.Fatalf("duplicate email: want field error on email, got %v", err)
	}
}

func TestCreateOwnerWorkspaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	a, err := st.CreateOwner(ctx, store.NewOwner{Email: "a@example.com", DisplayName: "A", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.CreateOwner(ctx, store.NewOwner{Email: "b@example.com", DisplayName: "B", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	if a.WorkspaceID != b.WorkspaceID {
		t.Fatalf("with one workspace, a new owner joins it: %d vs %d", a.WorkspaceID, b.WorkspaceID)
	}
	c, err := st.CreateOwner(ctx, store.NewOwner{Email: "c@example.com", DisplayName: "C", Password: "long enough password", WorkspaceName: "Other"})
	if err != nil || c.WorkspaceID == a.WorkspaceID {
		t.Fatalf("named workspace: %+v %v", c, err)
	}
	_, err = st.CreateOwner(ctx, store.NewOwner{Email: "d@example.com", DisplayName: "D", Password: "long enough password"})
	var fe *store.FieldError
	if !errors.As(err, &fe) || fe.Field != "workspace" {
		t.Fatalf("with several workspaces a name is required, got %v", err)
	}
}

func TestLoginFailuresCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	for range 3 {
		if err := st.RecordLoginFailure(ctx, "X@example.com", "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
	}
	n, err := st.RecentLoginFailures(ctx, "x@example.com", "127.0.0.1", 15*60e9)
	if err != nil || n != 3 {
		t.Fatalf("by email: %d %v", n, err)
	}
	n, _ = st.RecentLoginFailures(ctx, "y@example.com", "10.0.0.1", 15*60e9)
	if n != 3 {
		t.Fatalf("by address: %d", n)
	}
	if err := st.ClearLoginFailures(ctx, "x@example.com"); err != nil {
		t.Fatal(err)
	}
	n, _ = st.RecentLoginFailures(ctx, "x@example.com", "127.0.0.1", 15*60e9)
	if n != 0 {
		t.Fatalf("after clear: %d", n)
	}
}

func TestPasswordHashRoundTrip(t *testing.T) {
	t.Parallel()
	h, err := store.HashPassword("pässword with ünicode")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := store.CheckPassword(h, "pässword with ünicode"); !ok || err != nil {
		t.Fatalf("match: %v %v", ok, err)
	}
	if ok, _ := store.CheckPassword(h, "password with unicode"); ok {
		t.Fatal("different password matched")
	}
	h2, _ := store.HashPassword("pässword with ünicode")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: salt missing")
	}
}
