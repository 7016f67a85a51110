// Command osfoundry runs the osFoundry server: the MCP endpoint agents call and
// the web app their owners read. Run `osfoundry --help` for flags and
// subcommands.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/osfoundry/osfoundry/cmd/osfoundry/agent"
	"github.com/osfoundry/osfoundry/handlers"
	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/pgserver"
	"github.com/osfoundry/osfoundry/webhook"
)

const usage = `osfoundry — where coding agents report to the people who own the work.

Usage:
  osfoundry [serve] [flags]                      start the server (default)
  osfoundry owner create --email E --name N [--workspace W] [flags]
                                                 create an owner; password from stdin or a prompt
  osfoundry token create --email OWNER [--client NAME] [--scope read,write] [--project NAME]... [flags]
                                                 mint a bearer token for a client without OAuth (shown once),
                                                 bound to the base URL the server last started with (or --base-url)
  osfoundry migrate [flags]                      apply database migrations and exit
  osfoundry agent login|status|logout|install claude-code|uninstall claude-code …
                                                 the agent side: connect a checkout, wire Claude Code to it
                                                 (osfoundry agent help)

Flags (the environment variable named in brackets is used when the flag is not given):
`

// config is the server's configuration, from flags with env fallbacks.
type config struct {
	addr        string
	baseURL     string
	dataDir     string
	databaseURL string
	sessionKey  string
	logLevel    string
	shutdown    time.Duration
	opsAddr     string
	// deprecated lists the deprecated flags and variables given, to warn of.
	deprecated    []string
	trustProxy    bool
	allowPrivate  bool
	headerTimeout time.Duration
	// fastWebhooks shortens the webhook sender's waits (hidden; for tests).
	fastWebhooks bool
}

// testFastWebhooks is a flag for tests of the whole server, left out of
// --help: webhook retries after 100 ms to 1 s, 3 s leases, a sweep every
// 250 ms (webhook.FastOptions), so that tests need not wait for production
// backoffs and leases. Not for production use.
const testFastWebhooks = "test-fast-webhooks"

// hiddenFlags are registered but not listed by --help.
var hiddenFlags = map[string]bool{testFastWebhooks: true, "pprof-addr": true}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func (c *config) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", envOr("OSFOUNDRY_ADDR", "localhost:8080"), "listen address (OSFOUNDRY_ADDR)")
	fs.StringVar(&c.baseURL, "base-url", envOr("OSFOUNDRY_BASE_URL", ""), "public origin agents and browsers use, e.g. https://foundry.example.com (OSFOUNDRY_BASE_URL; default http://<addr> for serve, the base URL the server last started with for token create)")
	fs.StringVar(&c.dataDir, "data-dir", envOr("OSFOUNDRY_DATA_DIR", ".osfoundry"), "folder for the private PostgreSQL cluster (pg/) and the cookie key (OSFOUNDRY_DATA_DIR)")
	fs.StringVar(&c.databaseURL, "database-url", envOr("DATABASE_URL", ""), "PostgreSQL server to use instead of the private one (DATABASE_URL)")
	fs.StringVar(&c.sessionKey, "session-key", envOr("OSFOUNDRY_SESSION_KEY", ""), "hex cookie key of at least 64 bytes, shared by all replicas; generated into the data folder when empty (OSFOUNDRY_SESSION_KEY)")
	fs.StringVar(&c.logLevel, "log-level", envOr("OSFOUNDRY_LOG_LEVEL", "info"), "debug, info, warn or error (OSFOUNDRY_LOG_LEVEL)")
	fs.DurationVar(&c.shutdown, "shutdown-timeout", 10*time.Second, "how long in-flight requests may run after SIGTERM")
	fs.DurationVar(&c.headerTimeout, "header-timeout", 10*time.Second, "how long a client may take to send a request's headers before the connection is closed")
	fs.BoolVar(&c.trustProxy, "trust-proxy-headers", envOr("OSFOUNDRY_TRUST_PROXY_HEADERS", "") == "true", "take client addresses from X-Forwarded-For set by a loopback/private-network reverse proxy (OSFOUNDRY_TRUST_PROXY_HEADERS=true)")
	fs.BoolVar(&c.allowPrivate, "allow-private-targets", envOr("OSFOUNDRY_ALLOW_PRIVATE_TARGETS", "") == "true", "let outgoing requests (client ID metadata documents, webhooks) reach loopback, private-network, link-local and other non-public addresses, refused otherwise (OSFOUNDRY_ALLOW_PRIVATE_TARGETS=true)")
	fs.StringVar(&c.opsAddr, "ops-addr", envOr("OSFOUNDRY_OPS_ADDR", ""), "loopback address of the operations listener: Prometheus /metrics and Go's /debug/pprof profiles; off when empty (OSFOUNDRY_OPS_ADDR)")
	// The operations listener was first the profiles listener: its old flag
	// and variable still work, with a warning.
	if v := os.Getenv("OSFOUNDRY_PPROF_ADDR"); v != "" && c.opsAddr == "" {
		c.opsAddr = v
		c.deprecated = append(c.deprecated, "OSFOUNDRY_PPROF_ADDR")
	}
	fs.Func("pprof-addr", "deprecated: use --ops-addr", func(v string) error {
		c.opsAddr = v
		c.deprecated = append(c.deprecated, "--pprof-addr")
		return nil
	})
	fs.BoolVar(&c.fastWebhooks, testFastWebhooks, false, "tests only: shorten webhook retries, leases and sweeps")
}

// printFlags lists the flags of fs as PrintDefaults does, hidden ones left out.
func printFlags(fs *flag.FlagSet) {
	visible := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	visible.SetOutput(fs.Output())
	fs.VisitAll(func(f *flag.Flag) {
		if !hiddenFlags[f.Name] {
			visible.Var(f.Value, f.Name, f.Usage)
			visible.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	visible.PrintDefaults()
}

// finish checks the flags. A --base-url that was given is normalised here;
// one that was not stays empty: serve derives it from --addr, token create
// reads the one the server recorded.
func (c *config) finish() error {
	c.baseURL = strings.TrimRight(c.baseURL, "/")
	if c.baseURL != "" && !strings.HasPrefix(c.baseURL, "http://") && !strings.HasPrefix(c.baseURL, "https://") {
		return fmt.Errorf("--base-url %q: must start with http:// or https://", c.baseURL)
	}
	return nil
}

// listenBaseURL is serve's base URL when --base-url is not given:
// http://<addr>, with localhost for a wildcard host.
func (c *config) listenBaseURL() (string, error) {
	host, port, err := net.SplitHostPort(c.addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: %w", c.addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

func (c *config) log(l *slog.Logger) {
	db := "private PostgreSQL in " + filepath.Join(c.dataDir, "pg")
	if c.databaseURL != "" {
		db = maskURL(c.databaseURL)
	}
	key := "generated (data folder)"
	if c.sessionKey != "" {
		key = "configured (masked)"
	}
	l.Info("configuration", "addr", c.addr, "base_url", c.baseURL, "data_dir", c.dataDir, "database", db,
		"session_key", key, "log_level", c.logLevel, "allow_private_targets", c.allowPrivate, "ops_addr", c.opsAddr)
	for _, d := range c.deprecated {
		l.Warn(d + " is deprecated: use --ops-addr (OSFOUNDRY_OPS_ADDR)")
	}
}

func maskURL(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		if j := strings.LastIndex(s, "@"); j > i {
			if k := strings.Index(s[i+3:j], ":"); k >= 0 {
				return s[:i+3+k+1] + "****" + s[j:]
			}
		}
	}
	if strings.Contains(s, "password=") {
		return "(keyword DSN, password masked)"
	}
	return s
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "osfoundry:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "agent" {
		return agent.Run(args[1:], os.Stdin, os.Stdout, os.Stderr)
	}
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd = args[0]
		args = args[1:]
		if (cmd == "owner" || cmd == "token") && len(args) > 0 && args[0] == "create" {
			cmd += " create"
			args = args[1:]
		}
	}
	var cfg config
	fs := flag.NewFlagSet("osfoundry "+cmd, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		printFlags(fs)
	}
	cfg.register(fs)
	var email, name, workspace, client, scope string
	var projects multiFlag
	switch cmd {
	case "owner create":
		fs.StringVar(&email, "email", "", "owner's email (required)")
		fs.StringVar(&name, "name", "", "owner's display name (required)")
		fs.StringVar(&workspace, "workspace", "", "workspace to join, created when missing (default: the only workspace)")
	case "token create":
		fs.StringVar(&email, "email", "", "email of the owner the connection belongs to (required)")
		fs.StringVar(&client, "client", "Static token client", "name shown for this connection")
		fs.StringVar(&scope, "scope", "read,write", "scopes: read, write or read,write")
		fs.Var(&projects, "project", "project name to seat the agent in (repeatable)")
	case "serve", "migrate":
	case "help":
		fs.Usage()
		return nil
	default:
		fs.Usage()
		return fmt.Errorf("unknown command %q", cmd)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if err := cfg.finish(); err != nil {
		return err
	}
	logger, err := newLogger(cfg.logLevel)
	if err != nil {
		return err
	}
	slog.SetDefault(logger)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch cmd {
	case "serve":
		return serve(ctx, cfg, logger)
	case "migrate":
		st, closeDB, err := openDatabase(ctx, cfg, logger)
		if err != nil {
			return err
		}
		st.Close()
		closeDB()
		return nil
	case "owner create":
		return ownerCreate(ctx, cfg, logger, email, name, workspace)
	case "token create":
		return tokenCreate(ctx, cfg, logger, email, client, scope, projects)
	}
	return nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// openDatabase connects to DATABASE_URL or starts the private cluster, then
// applies migrations. The returned func stops the private cluster.
func openDatabase(ctx context.Context, cfg config, log *slog.Logger) (*store.Store, func(), error) {
	dsn := cfg.databaseURL
	stopPG := func() {}
	if dsn == "" {
		if err := os.MkdirAll(cfg.dataDir, 0o711); err != nil {
			return nil, nil, fmt.Errorf("create data folder: %w", err)
		}
		start := time.Now()
		pg, err := pgserver.Start(ctx, pgserver.Options{DataDir: filepath.Join(cfg.dataDir, "pg"), Logger: log})
		if err != nil {
			return nil, nil, err
		}
		log.Info("private PostgreSQL started", "took", time.Since(start).Round(time.Millisecond))
		dsn = pg.DSN
		stopPG = pg.Stop
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		stopPG()
		return nil, nil, err
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		st.Close()
		stopPG()
		return nil, nil, err
	}
	if len(applied) > 0 {
		log.Info("migrations applied", "versions", applied)
	}
	return st, stopPG, nil
}

// sessionKeys returns the cookie signing and encryption keys: configured, or
// generated once into the data folder.
func sessionKeys(cfg config) ([]byte, []byte, error) {
	raw := cfg.sessionKey
	if raw == "" {
		path := filepath.Join(cfg.dataDir, "session.key")
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			raw = strings.TrimSpace(string(b))
		case errors.Is(err, os.ErrNotExist):
			k := make([]byte, 96)
			if _, err := rand.Read(k); err != nil {
				return nil, nil, err
			}
			raw = hex.EncodeToString(k)
			if err := os.MkdirAll(cfg.dataDir, 0o711); err != nil {
				return nil, nil, err
			}
			if err := os.WriteFile(path, []byte(raw+"\n"), 0o600); err != nil {
				return nil, nil, fmt.Errorf("write cookie key: %w", err)
			}
		default:
			return nil, nil, fmt.Errorf("read cookie key: %w", err)
		}
	}
	k, err := hex.DecodeString(raw)
	if err != nil || len(k) < 64 {
		return nil, nil, errors.New("session key must be at least 64 bytes, hex-encoded (128+ hex characters)")
	}
	hash := k[:64]
	var block []byte
	if len(k) >= 96 {
		block = k[64:96]
	}
	return hash, block, nil
}

// defaultGCPercent trades memory for CPU: the MCP SDK allocates generously
// per request (≈0.4 MB, nearly all garbage at once), so collecting less often
// saves a large share of CPU while the live heap stays in the tens of MB.
const defaultGCPercent = 400

func serve(ctx context.Context, cfg config, log *slog.Logger) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if cfg.baseURL == "" {
		u, err := cfg.listenBaseURL()
		if err != nil {
			return err
		}
		cfg.baseURL = u
	}
	cfg.log(log)
	begin := time.Now()
	st, stopPG, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopPG()
	defer st.Close()
	// token create binds its tokens to this address.
	if err := st.RecordBaseURL(ctx, cfg.baseURL); err != nil {
		return err
	}
	hashKey, blockKey, err := sessionKeys(cfg)
	if err != nil {
		return err
	}
	// What operators scrape on the operations listener.
	m := metrics.New()
	m.WatchStore(st)
	// The listener (one LISTEN connection) keeps the mail cache, every
	// replica's "newest note per session", current; it stops before the pool closes.
	listener := st.NewListener(log)
	mail := st.NewMailCache(listener)
	m.WatchListener(listener, mail)
	// The webhook sender delivers the outbox; the listener wakes it
	// when deliveries are queued. It stops claiming at shutdown and finishes
	// what it has in flight before the pool closes.
	senderOpts := webhook.Options{Store: st, BaseURL: cfg.baseURL, Logger: log, AllowPrivateTargets: cfg.allowPrivate}
	if cfg.fastWebhooks {
		log.Warn("webhook test timing in use: retries, leases and sweeps are shortened (--" + testFastWebhooks + ")")
		senderOpts = webhook.FastOptions(senderOpts)
	}
	sender := webhook.New(senderOpts)
	sender.WakeOn(listener)
	hubCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	hubDone := make(chan struct{})
	go func() { defer close(hubDone); listener.Run(hubCtx) }()
	defer func() { stopHub(); <-hubDone }()
	senderCtx, stopSender := context.WithCancel(context.WithoutCancel(ctx))
	senderDone := make(chan struct{})
	go func() { defer close(senderDone); sender.Run(senderCtx) }()
	defer func() { stopSender(); <-senderDone }()
	h := handlers.New(handlers.Deps{
		Store:    st,
		Listener: listener,
		Mail:     mail,
		Logger:   log,
		Metrics:  m,
		Config:   handlers.Config{BaseURL: cfg.baseURL, SessionHashKey: hashKey, SessionBlockKey: blockKey, TrustProxyHeaders: cfg.trustProxy, AllowPrivateTargets: cfg.allowPrivate},
	})
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	srv := &http.Server{
		Handler:           h.Handler(),
		ReadHeaderTimeout: cfg.headerTimeout,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if cfg.opsAddr != "" {
		if err := serveOps(cfg.opsAddr, m, log); err != nil {
			return err
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("osfoundry is ready", "took", time.Since(begin).Round(time.Millisecond))
	fmt.Fprintf(os.Stderr, "\n  osFoundry is running at %s\n  MCP endpoint: %s/mcp\n  Press Ctrl-C to stop.\n\n", cfg.baseURL, cfg.baseURL)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "drain_timeout", cfg.shutdown)
	// Live streams never finish by themselves: end them first, so that the
	// drain waits for requests only. Browsers reconnect and replay.
	h.CloseStreams()
	stopSender()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("requests still running at the drain timeout were cut off", "err", err)
	}
	return nil
}

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

func ownerCreate(ctx context.Context, cfg config, log *slog.Logger, email, name, workspace string) error {
	if email == "" || name == "" {
		return errors.New("owner create: --email and --name are required")
	}
	pw, err := readPassword("Password for " + email + ": ")
	if err != nil {
		return fmt.Errorf("read password: %w", err)
	}
	st, stopPG, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopPG()
	defer st.Close()
	o, err := st.CreateOwner(ctx, store.NewOwner{Email: email, DisplayName: name, Password: pw, WorkspaceName: workspace})
	if err != nil {
		return err
	}
	fmt.Printf("Created owner %s (%s) in workspace %q.\n", o.Email, o.DisplayName, o.WorkspaceName)
	return nil
}

func tokenCreate(ctx context.Context, cfg config, log *slog.Logger, email, client, scope string, projects []string) error {
	if email == "" {
		return errors.New("token create: --email is required")
	}
	var scopes []string
	for _, s := range strings.Split(scope, ",") {
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
		OwnerEmail: email, ClientName: client, Scopes: scopes, ProjectNames: projects, Resource: resource,
	})
	if err != nil {
		return err
	}
	fmt.Printf("Connection %d created for %s (a server at another address refuses the token).\n"+
		"Its bearer token (shown once, valid until %s):\n\n%s\n\n", tok.ConnectionID, resource, tok.ExpiresAt.Format(time.RFC3339), tok.Token)
	return nil
}
