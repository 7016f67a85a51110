package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
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
	code := store.NewSetupCode()
	if ok, err := st.AddSetupCode(ctx, code); err != nil || !ok {
		t.Fatalf("setup code on a fresh install: %v %v", ok, err)
	}
	// A wrong code and a bad field are refused together, nothing hashed.
	_, err = st.CreateFirstOwner(ctx, store.NewOwner{Email: "ada@example.com", DisplayName: " ", Password: "long enough password"}, "WRONG-CODE")
	if fes := store.FieldErrorsOf(err); len(fes) != 2 || fes[0].Field != "setup_code" || fes[1].Field != "display_name" {
		t.Fatalf("wrong code and no name: %v", err)
	}
	if n := st.Hashes().Counts().Run; n != 0 {
		t.Fatalf("%d passwords hashed for a refused form", n)
	}
	// The code is typed as it reads, or in lower case without dashes.
	typed := strings.ToLower(strings.ReplaceAll(code, "-", ""))
	o, err := st.CreateFirstOwner(ctx, store.NewOwner{Email: "  Ada@Example.COM ", DisplayName: "Ada", Password: "long enough password"}, typed)
	if err != nil {
		t.Fatal(err)
	}
	var left int
	storetest.SQL(t, st).QueryRow(`SELECT count(*) FROM setup_codes`).Scan(&left)
	if left != 0 {
		t.Fatalf("%d setup codes left after the first owner", left)
	}
	if ok, err := st.AddSetupCode(ctx, store.NewSetupCode()); err != nil || ok {
		t.Fatalf("setup code once an owner exists: %v %v", ok, err)
	}
	if o.Email != "ada@example.com" || o.WorkspaceID == 0 || o.WorkspaceName == "" {
		t.Fatalf("owner = %+v", o)
	}
	// Once an owner exists the answer is a conflict, before the code or
	// the fields are looked at and before anything is hashed.
	hashed := st.Hashes().Counts().Run
	if _, err := st.CreateFirstOwner(ctx, store.NewOwner{Email: "b@example.com", DisplayName: "B", Password: "long enough password"}, code); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second first owner: want ErrConflict, got %v", err)
	}
	if st.Hashes().Counts().Run != hashed {
		t.Fatal("a refused first owner was hashed")
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
	code := store.NewSetupCode()
	if _, err := st.AddSetupCode(ctx, code); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.CreateFirstOwner(ctx, store.NewOwner{Email: "o" + string(rune('a'+i)) + "@example.com", DisplayName: "O", Password: "long enough password"}, code)
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
	// Every refused field at once, in the form's order.
	_, err := st.CreateOwner(ctx, store.NewOwner{Email: "nope", DisplayName: "", Password: "short"})
	var fields []string
	for _, fe := range store.FieldErrorsOf(err) {
		fields = append(fields, fe.Field)
	}
	if !slices.Equal(fields, []string{"email", "display_name", "password"}) {
		t.Fatalf("all refused fields: %v (%v)", fields, err)
	}
	if _, err := st.CreateOwner(ctx, store.NewOwner{Email: "a@example.com", DisplayName: "A", Password: "long enough password"}); err != nil {
		t.Fatal(err)
	}
	_, err = st.CreateOwner(ctx, store.NewOwner{Email: "A@EXAMPLE.COM", DisplayName: "A2", Password: "long enough password"})
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
