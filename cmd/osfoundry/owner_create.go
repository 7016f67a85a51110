package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/osfoundry/osfoundry/store"
)

// ownerCreateCommand is `osfoundry owner create`.
type ownerCreateCommand struct {
	email, name, workspace, role string
}

func (c *ownerCreateCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.email, "email", "", "owner's email (required)")
	fs.StringVar(&c.name, "name", "", "owner's display name (required)")
	fs.StringVar(&c.workspace, "workspace", "", "workspace to join, created when missing (default: the only workspace)")
	fs.StringVar(&c.role, "role", "admin", "the owner's role in the workspace: admin, member or viewer")
}

func (c *ownerCreateCommand) run(ctx context.Context, cfg config, log *slog.Logger) error {
	if c.email == "" || c.name == "" {
		return errors.New("owner create: --email and --name are required")
	}
	role, err := store.ParseRole("role", c.role)
	if err != nil {
		return fmt.Errorf("owner create: --role: choose admin, member or viewer")
	}
	pw, err := readPassword("Password for " + c.email + ": ")
	if err != nil {
		return fmt.Errorf("read password: %w", err)
	}
	st, stopPG, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopPG()
	defer st.Close()
	o, err := st.CreateOwner(ctx, store.NewOwner{Email: c.email, DisplayName: c.name, Password: pw, WorkspaceName: c.workspace, Role: role})
	if err != nil {
		return err
	}
	fmt.Printf("Created owner %s (%s), %s of workspace %q.\n", o.Email, o.DisplayName, o.Role, o.WorkspaceName)
	return nil
}

// readPassword prompts without echo on a terminal, else reads one line.
func readPassword(prompt string) (string, error) {
	if term.IsTerminal(int(os.Stdin.Fd())) {
		fmt.Fprint(os.Stderr, prompt)
		b, err := term.ReadPassword(int(os.Stdin.Fd()))
		fmt.Fprintln(os.Stderr)
		return string(b), err
	}
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
