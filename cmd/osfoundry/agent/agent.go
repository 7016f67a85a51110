// Package agent is `osfoundry agent …`: it connects a checkout to a server
// with OAuth and wires Claude Code or Codex to it through a stdio MCP bridge
// and hooks, so that the model has to remember neither.
package agent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const usage = `osfoundry agent — connect this checkout to an osFoundry server, and Claude Code or Codex to it.

Usage:
  osfoundry agent login --server URL [--no-browser] [--handle H [--name N]] [--timeout 5m]
        connect this checkout (its git top level) with OAuth; one checkout is one agent.
        --handle claims the agent profile right away. A plain http:// server must be on
        this machine (loopback) unless --allow-insecure-http is given.
  osfoundry agent status [--server URL]       show this checkout's connection and check it
  osfoundry agent logout [--server URL]       revoke the connection and delete its credentials
  osfoundry agent install claude-code [--server URL] [--dry-run] [--no-allow-rule] [--absolute] [--approval-wait 120]
        add the MCP server to .mcp.json, and the hooks and a permission rule for its tools
        (permissions.allow: mcp__osfoundry; --no-allow-rule leaves it out) to .claude/settings.local.json;
        the PermissionRequest hook brings the client's prompts to the owners and waits --approval-wait seconds
  osfoundry agent install codex [--server URL] [--dry-run] [--no-allow-rule] [--absolute] [--approval-wait 120]
        add the MCP server (its tools approved: default_tools_approval_mode; --no-allow-rule
        leaves it out) to .codex/config.toml, and the hooks to .codex/hooks.json
        The entries start the command osfoundry (on PATH after make install); --absolute
        writes the path of this binary instead.
  osfoundry agent uninstall claude-code|codex [--server URL] [--dry-run]
        take them out again
  osfoundry agent hook --server URL [--client codex]
                                              (run by the client) one hook event, JSON on stdin
  osfoundry agent mcp --server URL            (run by the client) MCP over stdio, forwarded to URL/mcp

--server defaults to the one server this checkout is connected to.
Credentials live in <user config>/osfoundry/agents (0600); the hook logs its failures
to <user state>/osfoundry/hook.log. docs/claude-code.md explains the setup.
`

// Run runs `osfoundry agent <command> …`. What people read passes through
// printable, since some of it comes from the server.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmd, args := args[0], args[1:]
	if cmd == "hook" {
		runHook(args, stdin, stdout)
		return nil
	}
	if cmd == "mcp" {
		return run(cmd, args, stdin, stdout, stderr)
	}
	if err := run(cmd, args, stdin, printableWriter{stdout}, printableWriter{stderr}); err != nil {
		return printableError{err}
	}
	return nil
}

func run(cmd string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var agentCLI hookClient
	if cmd == "install" || cmd == "uninstall" {
		var err error
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			err = errors.New("no client")
		} else {
			agentCLI, err = parseHookClient(args[0])
		}
		if err != nil {
			return fmt.Errorf("agent %s: name the client: osfoundry agent %s %s", cmd, cmd, strings.Join(strings.Split(clientNames(), ", "), "|"))
		}
		args = args[1:]
	}

	fs := flag.NewFlagSet("osfoundry agent "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	server := fs.String("server", "", "osFoundry server, e.g. https://foundry.example.com")
	var noBrowser, dryRun, insecureHTTP, noAllowRule, absolute bool
	var handle, name string
	var timeout time.Duration
	var approvalWait int
	switch cmd {
	case "login":
		fs.BoolVar(&noBrowser, "no-browser", false, "print the sign-in URL instead of opening a browser")
		fs.StringVar(&handle, "handle", "", "claim this agent handle right after signing in")
		fs.StringVar(&name, "name", "", "display name for --handle (default: the handle)")
		fs.DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the approval in the browser")
		fs.BoolVar(&insecureHTTP, "allow-insecure-http", false, "allow a plain http:// server that is not on this machine (the sign-in and tokens cross the network unencrypted)")
	case "install", "uninstall":
		fs.BoolVar(&dryRun, "dry-run", false, "print the changes without writing them")
		if cmd == "install" {
			fs.BoolVar(&noAllowRule, "no-allow-rule", false, "leave out the permission rule for the osfoundry tools (the client then asks before each)")
			fs.BoolVar(&absolute, "absolute", false, "write the absolute path of this binary instead of the command osfoundry")
			fs.IntVar(&approvalWait, "approval-wait", 0, "the project's approval wait in seconds (10-600): how long the PermissionRequest hook waits for an owner (default: the server's setting for this checkout's connection, else 120)")
		}
	case "status", "logout", "mcp":
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", "agent "+cmd)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("agent %s: unexpected argument %q", cmd, fs.Arg(0))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dirs, err := defaultDirs()
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	checkout, err := checkoutOf(ctx, startDir(wd))
	if err != nil {
		return err
	}
	srv, err := resolveServer(dirs, checkout, *server, cmd == "login" || cmd == "mcp")
	if err != nil {
		return err
	}
	acct := account{dirs: dirs, server: srv, checkout: checkout}

	switch cmd {
	case "login":
		return login(ctx, stdout, loginOptions{dirs: dirs, Server: srv, Checkout: checkout, NoBrowser: noBrowser,
			InsecureHTTP: insecureHTTP, Timeout: timeout, Handle: handle, Name: name})
	case "logout":
		return logout(ctx, stdout, acct)
	case "status":
		return status(ctx, stdout, acct)
	case "mcp":
		return runBridge(ctx, dirs, srv, checkout, stdin, stdout, stderr)
	}
	command, note := installCommand(absolute)
	o := installOptions{Client: agentCLI, Checkout: checkout, Server: srv, Command: command, DryRun: dryRun, Remove: cmd == "uninstall", NoAllowRule: noAllowRule,
		ApprovalWait: approvalWait}
	switch {
	case cmd == "install" && approvalWait == 0:
		o.ApprovalWait = serverApprovalWait(ctx, acct)
	case cmd == "install" && (approvalWait < 10 || approvalWait > 600):
		return fmt.Errorf("--approval-wait %d: use 10 to 600 seconds, the project's approval wait", approvalWait)
	}
	if err := install(ctx, stdout, o); err != nil {
		return err
	}
	if note != "" && !o.Remove {
		fmt.Fprintln(stdout, note)
	}
	if _, err := acct.load(); err != nil && !o.Remove {
		fmt.Fprintf(stdout, "Not connected yet: run `osfoundry agent login --server %s` in %s.\n", srv, checkout)
	}
	return nil
}

func resolveServer(dirs folders, checkout, flagValue string, required bool) (string, error) {
	if flagValue != "" || required {
		return normalizeServer(flagValue)
	}
	accts := listAccounts(dirs, checkout)
	switch len(accts) {
	case 0:
		return "", fmt.Errorf("%s is not connected to a server: run `osfoundry agent login --server URL` first, or pass --server", checkout)
	case 1:
		return accts[0].Server, nil
	}
	return "", fmt.Errorf("%s is connected to %d servers: pick one with --server", checkout, len(accts))
}

func logout(ctx context.Context, out io.Writer, acct account) error {
	c, err := acct.load()
	if err != nil {
		return err
	}
	revoke(ctx, newHTTPClient(), c)
	if err := acct.remove(); err != nil {
		return err
	}
	fmt.Fprintf(out, "Disconnected %s from %s and deleted its credentials.\n", acct.checkout, acct.server)
	return nil
}

func status(ctx context.Context, out io.Writer, acct account) error {
	c, err := newClient(acct)
	if err != nil {
		return err
	}
	cr := c.creds
	slug := cr.SenderSlug
	if slug == "" {
		slug = "(not known here; claim_connected_profile or login --handle sets it)"
	}
	fmt.Fprintf(out, "Checkout:     %s\nServer:       %s\nCredentials:  %s\nScopes:       %s\nSender slug:  %s\n",
		acct.checkout, acct.server, acct.credentialsPath(), cr.Scope, slug)
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	res, err := c.callTool(ctx, "list_sessions", nil)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("list_sessions: %s", res.text())
	}
	var v struct {
		Sessions []struct{} `json:"sessions"`
	}
	res.decode(&v)
	line := fmt.Sprintf("working; invited to %s", plural(len(v.Sessions), "session"))
	if h := res.unread(); h != nil {
		line += fmt.Sprintf("; %s waiting", plural(h.Total, "unread note"))
	}
	fmt.Fprintf(out, "Connection:   %s\n", line)
	return nil
}
