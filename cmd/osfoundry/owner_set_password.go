package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/osfoundry/osfoundry/store"
)

// ownerSetPasswordCommand is `osfoundry owner set-password`, the operator's
// reset; every sign-in of the owner ends.
type ownerSetPasswordCommand struct {
	email string
}

func (c *ownerSetPasswordCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.email, "email", "", "the owner's email (required)")
}

func (c *ownerSetPasswordCommand) run(ctx context.Context, cfg config, log *slog.Logger) error {
	if c.email == "" {
		return errors.New("owner set-password: --email is required")
	}
	pw, err := readPassword("New password for " + c.email + ": ")
	if err != nil {
		return fmt.Errorf("read password: %w", err)
	}
	st, stopPG, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopPG()
	defer st.Close()
	ended, err := st.SetPassword(ctx, c.email, pw)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("owner set-password: no owner has the email %s", store.NormalizeEmail(c.email))
	}
	if fes := store.FieldErrorsOf(err); len(fes) > 0 {
		return fmt.Errorf("owner set-password: the password: %s", fes[0].Message)
	}
	if err != nil {
		return err
	}
	fmt.Printf("Password of %s changed; %d sign-ins ended.\n", store.NormalizeEmail(c.email), ended)
	return nil
}
