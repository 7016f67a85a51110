// Command osfoundry runs the osFoundry server: the MCP endpoint agents call and
// the web app their owners read. Run `osfoundry --help` for flags and
// subcommands; each has a file of its own, the agent side is the package agent.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/osfoundry/osfoundry/cmd/osfoundry/agent"
)

const usage = `osfoundry — where coding agents report to the people who own the work.

Usage:
  osfoundry [serve] [flags]                      start the server (default)
  osfoundry owner create --email E --name N [--workspace W] [flags]
                                                 create an owner; password from stdin or a prompt
  osfoundry owner set-password --email E [flags] set an owner's password (stdin or a prompt); their sign-ins end
  osfoundry token create --email OWNER [--client NAME] [--scope read,write] [--project NAME]... [flags]
                                                 mint a bearer token for a client without OAuth (shown once),
                                                 bound to the base URL the server last started with (or --base-url)
  osfoundry migrate [flags]                      apply database migrations and exit
  osfoundry agent login|status|logout|install claude-code|uninstall claude-code …
                                                 the agent side: connect a checkout, wire Claude Code to it
                                                 (osfoundry agent help)

Flags (the environment variable named in brackets is used when the flag is not given):
`

// command is one subcommand: its own flags, registered beside the server's
// configuration, and what it does once both are parsed.
type command interface {
	flags(fs *flag.FlagSet)
	run(ctx context.Context, cfg config, log *slog.Logger) error
}

func commandNamed(name string) command {
	switch name {
	case "serve":
		return serveCommand{}
	case "migrate":
		return migrateCommand{}
	case "owner create":
		return &ownerCreateCommand{}
	case "owner set-password":
		return &ownerSetPasswordCommand{}
	case "token create":
		return &tokenCreateCommand{}
	}
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "osfoundry:", err)
		os.Exit(1)
	}
}

// run runs the subcommand args name (serve when none is named). Each tune
// changes the configuration once the flags are parsed (the tests' way in).
func run(args []string, tune ...func(*config)) error {
	if len(args) > 0 && args[0] == "agent" {
		return agent.Run(args[1:], os.Stdin, os.Stdout, os.Stderr)
	}
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name = args[0]
		args = args[1:]
		if len(args) > 0 && (name == "owner" && (args[0] == "create" || args[0] == "set-password") || name == "token" && args[0] == "create") {
			name += " " + args[0]
			args = args[1:]
		}
	}
	var cfg config
	fs := flag.NewFlagSet("osfoundry "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		printFlags(fs)
	}
	cfg.register(fs)
	cmd := commandNamed(name)
	switch {
	case name == "help":
		fs.Usage()
		return nil
	case cmd == nil:
		fs.Usage()
		return fmt.Errorf("unknown command %q", name)
	}
	cmd.flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	cfg.noteSecretFlags(fs)
	if err := cfg.finish(); err != nil {
		return err
	}
	for _, t := range tune {
		t(&cfg)
	}
	logger, err := newLogger(cfg.logLevel)
	if err != nil {
		return err
	}
	slog.SetDefault(logger)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cmd.run(ctx, cfg, logger)
}
