package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestOwnerSetPassword runs `osfoundry owner set-password`: the password
// comes from standard input, every sign-in of the owner ends, and only the
// new password signs in; an unknown email or a short password is refused.
func TestOwnerSetPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.NewDatabase(t)
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o, err := st.CreateOwner(ctx, store.NewOwner{Email: "op@example.com", DisplayName: "Op", Password: ownerPassword})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := st.CreateSignIn(ctx, o, "192.0.2.1", "browser"); err != nil {
			t.Fatal(err)
		}
	}
	run := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(binary(t), append([]string{"owner", "set-password"}, args...)...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "OSFOUNDRY_LOG_LEVEL=error")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("the operator's new password\n", "--email", "Op@Example.com")
	if err != nil || !strings.Contains(out, "Password of op@example.com changed; 2 sign-ins ended.") {
		t.Fatalf("set-password: %v\n%s", err, out)
	}
	if list, _ := st.ListSignIns(ctx, o.ID); len(list) != 0 {
		t.Fatalf("%d sign-ins left after set-password", len(list))
	}
	if _, err := st.Authenticate(ctx, "op@example.com", "the operator's new password"); err != nil {
		t.Fatalf("the new password: %v", err)
	}
	if _, err := st.Authenticate(ctx, "op@example.com", ownerPassword); err == nil {
		t.Fatal("the old password still signs in")
	}
	for _, c := range []struct{ stdin, email, want string }{
		{"another long password\n", "nobody@example.com", "no owner has the email nobody@example.com"},
		{"short\n", "op@example.com", "at least 10 characters"},
		{"another long password\n", "", "--email is required"},
	} {
		args := []string{}
		if c.email != "" {
			args = append(args, "--email", c.email)
		}
		if out, err := run(c.stdin, args...); err == nil || !strings.Contains(out, c.want) {
			t.Errorf("set-password %v: %v %q, want an error saying %q", args, err, out, c.want)
		}
	}
}
