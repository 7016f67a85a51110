package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestSignInsLiveAndEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	db := storetest.SQL(t, st)
	a, err := st.CreateOwner(ctx, store.NewOwner{Email: "a@example.com", DisplayName: "A", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.CreateOwner(ctx, store.NewOwner{Email: "b@example.com", DisplayName: "B", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	tok, si, err := st.CreateSignIn(ctx, a, "192.0.2.7", "Mozilla/5.0 "+strings.Repeat("x", 400)+"\x00")
	if err != nil {
		t.Fatal(err)
	}
	if len([]rune(si.UserAgent)) != 300 || strings.Contains(si.UserAgent, "\x00") || si.RemoteAddr != "192.0.2.7" || si.OwnerID != a.ID {
		t.Fatalf("sign-in = %+v", si)
	}
	// Only the token's hash is stored.
	var stored int
	db.QueryRow(`SELECT count(*) FROM sign_ins WHERE token_hash = $1 AND position($2::bytea IN token_hash) = 0`, store.SignInTokenHash(tok), []byte(tok)).Scan(&stored)
	if stored != 1 {
		t.Fatal("the sign-in is not kept by the hash of its token")
	}
	if got, err := st.SignInByToken(ctx, tok); err != nil || got.ID != si.ID {
		t.Fatalf("by token: %+v %v", got, err)
	}
	if _, err := st.SignInByToken(ctx, tok+"x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown token: %v", err)
	}
	// Reading it renews its last use once that is a few minutes old, not before.
	db.Exec(`UPDATE sign_ins SET last_seen_at = now() - interval '4 minutes' WHERE id = $1`, si.ID)
	if got, _ := st.SignInByToken(ctx, tok); time.Since(got.LastSeenAt) < 3*time.Minute {
		t.Fatalf("renewed after 4 minutes: %v", got.LastSeenAt)
	}
	db.Exec(`UPDATE sign_ins SET last_seen_at = now() - interval '6 days' WHERE id = $1`, si.ID)
	if got, _ := st.SignInByToken(ctx, tok); time.Since(got.LastSeenAt) > time.Minute {
		t.Fatalf("not renewed after 6 days: %v", got.LastSeenAt)
	}

	// Seven idle days end it, whatever its age; so do thirty days from its
	// creation, however recently it was used.
	db.Exec(`UPDATE sign_ins SET last_seen_at = now() - interval '7 days 1 minute' WHERE id = $1`, si.ID)
	if _, err := st.SignInByToken(ctx, tok); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("idle for a week: %v", err)
	}
	var renewed bool
	db.QueryRow(`SELECT last_seen_at > now() - interval '1 minute' FROM sign_ins WHERE id = $1`, si.ID).Scan(&renewed)
	if renewed {
		t.Fatal("an ended sign-in was renewed")
	}
	db.Exec(`UPDATE sign_ins SET last_seen_at = now(), created_at = now() - interval '30 days 1 minute' WHERE id = $1`, si.ID)
	if _, err := st.SignInByToken(ctx, tok); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("thirty days old: %v", err)
	}
	// The next sign-in of the owner deletes the ended ones.
	_, si2, err := st.CreateSignIn(ctx, a, "192.0.2.8", "Firefox")
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	db.QueryRow(`SELECT count(*) FROM sign_ins WHERE owner_id = $1`, a.ID).Scan(&rows)
	if rows != 1 {
		t.Fatalf("%d sign-in rows, want the ended one gone", rows)
	}
	_, si3, _ := st.CreateSignIn(ctx, a, "192.0.2.9", "Safari")
	_, si4, _ := st.CreateSignIn(ctx, a, "192.0.2.10", "Edge")
	_, bsi, _ := st.CreateSignIn(ctx, b, "192.0.2.11", "B's browser")
	if list, err := st.ListSignIns(ctx, a.ID); err != nil || len(list) != 3 {
		t.Fatalf("a's sign-ins: %d %v", len(list), err)
	}
	// Another owner's sign-in cannot be ended by id.
	if err := st.EndSignIn(ctx, store.Actor{OwnerID: a.ID, WorkspaceID: a.WorkspaceID}, bsi.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ending another owner's sign-in: %v", err)
	}
	if err := st.EndSignIn(ctx, store.Actor{OwnerID: a.ID, WorkspaceID: a.WorkspaceID}, si2.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := st.EndOtherSignIns(ctx, store.Actor{OwnerID: a.ID, WorkspaceID: a.WorkspaceID}, si4.ID); err != nil || n != 1 {
		t.Fatalf("end others: %d %v (si3 %d left)", n, err, si3.ID)
	}
	if list, _ := st.ListSignIns(ctx, a.ID); len(list) != 1 || list[0].ID != si4.ID {
		t.Fatalf("after ending the others: %+v", list)
	}
	if list, _ := st.ListSignIns(ctx, b.ID); len(list) != 1 {
		t.Fatal("b's sign-in ended with a's")
	}
}

func TestPasswordChangeAndReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	a, err := st.CreateOwner(ctx, store.NewOwner{Email: "a@example.com", DisplayName: "A", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	_, keep, _ := st.CreateSignIn(ctx, a, "192.0.2.1", "here")
	_, other, _ := st.CreateSignIn(ctx, a, "192.0.2.2", "there")

	// A wrong current password and a short new one, refused together.
	err = st.ChangePassword(ctx, a.ID, "not it", "short", keep.ID)
	if fes := store.FieldErrorsOf(err); len(fes) != 2 || fes[0].Field != "current_password" || fes[1].Field != "new_password" {
		t.Fatalf("refused change: %v", err)
	}
	if err := st.ChangePassword(ctx, a.ID, "long enough password", "a brand new password", keep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Authenticate(ctx, "a@example.com", "a brand new password"); err != nil {
		t.Fatalf("new password: %v", err)
	}
	if _, err := st.Authenticate(ctx, "a@example.com", "long enough password"); !errors.Is(err, store.ErrInvalidCredentials) {
		t.Fatalf("old password still signs in: %v", err)
	}
	list, _ := st.ListSignIns(ctx, a.ID)
	if len(list) != 1 || list[0].ID != keep.ID {
		t.Fatalf("after the change, sign-ins %+v, want only %d (not %d)", list, keep.ID, other.ID)
	}

	// The operator's reset ends every sign-in.
	if _, err := st.SetPassword(ctx, "A@example.com", "short"); store.FieldErrorsOf(err) == nil {
		t.Fatalf("short reset: %v", err)
	}
	if n, err := st.SetPassword(ctx, "A@example.com", "the operator's choice"); err != nil || n != 1 {
		t.Fatalf("reset: %d %v", n, err)
	}
	if _, err := st.SetPassword(ctx, "nobody@example.com", "the operator's choice"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("reset of nobody: %v", err)
	}
	if _, err := st.Authenticate(ctx, "a@example.com", "the operator's choice"); err != nil {
		t.Fatal(err)
	}
}
