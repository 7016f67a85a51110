package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// tokenCreateCommand is `osfoundry token create`: a connection with a bearer
// token, for a client without OAuth, bound to the server's base URL.
type tokenCreateCommand struct {
	email, client, scope string
	projects             multiFlag
}

func (c *tokenCreateCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.email, "email", "", "email of the owner the connection belongs to (required)")
	fs.StringVar(&c.client, "client", "Static token client", "name shown for this connection")
	fs.StringVar(&c.scope, "scope", "read,write", "scopes: read, write or read,write")
	fs.Var(&c.projects, "project", "project name to seat the agent in (repeatable)")
}

func (c *tokenCreateCommand) run(ctx context.Context, cfg config, log *slog.Logger) error {
	if c.email == "" {
		return errors.New("token create: --email is required")
	}
	var scopes []string
	for _, s := range strings.Split(c.scope, ",") {
		s = strings.TrimSpace(s)
		if s != "" && !strings.HasPrefix(s, "osfoundry:") {
			s = "osfoundry:" + s
		}
		scopes = append(scopes, s)
	}
	st, stopPG, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopPG()
	defer st.Close()
	base := cfg.baseURL
	if base == "" {
		base, err = st.ServedBaseURL(ctx)
		if errors.Is(err, store.ErrNotFound) {
			return errors.New("token create: no base URL known: start `osfoundry serve` once on this database, " +
				"or pass --base-url (OSFOUNDRY_BASE_URL) with the address agents will reach")
		}
		if err != nil {
			return err
		}
	}
	resource := base + "/mcp"
	tok, err := st.CreateStaticToken(ctx, store.StaticTokenRequest{
		OwnerEmail: c.email, ClientName: c.client, Scopes: scopes, ProjectNames: c.projects, Resource: resource,
	})
	var fe *store.FieldError
	if errors.As(err, &fe) && fe.Field == "project" {
		return fmt.Errorf("token create --project: %s", fe.Message)
	}
	if err != nil {
		return err
	}
	fmt.Printf("Connection %d created for %s (a server at another address refuses the token).\n"+
		"Its bearer token (shown once, valid until %s):\n\n%s\n\n", tok.ConnectionID, resource, tok.ExpiresAt.Format(time.RFC3339), tok.Token)
	return nil
}

// multiFlag is a flag that may be given more than once.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
