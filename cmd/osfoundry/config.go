package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/osfoundry/osfoundry/email"
	"github.com/osfoundry/osfoundry/handlers"
	"github.com/osfoundry/osfoundry/handlers/mcp"
	"github.com/osfoundry/osfoundry/live"
)

// config is the server's configuration, from flags with env fallbacks.
type config struct {
	addr          string
	baseURL       string
	dataDir       string
	databaseURL   string
	sessionKey    string
	logLevel      string
	shutdown      time.Duration
	opsAddr       string
	deprecated    []string // deprecated flags and variables given, to warn of
	exposed       []string // secret flags given on the command line, to warn of
	trustProxy    bool
	allowPrivate  bool
	headerTimeout time.Duration
	// mcpSDKOnly has the MCP SDK answer every /mcp request (make bench
	// measures the server with and without the front's own answers).
	mcpSDKOnly bool
	// The *Text fields are the flags as given, beside their parsed values.
	streamLimitsText  string
	streamLimits      live.Limits
	waitLimitsText    string
	waitLimits        mcp.WaitLimits
	pageLimitsText    string
	pageLimits        handlers.PageLimits
	metadataDocuments onOff
	envErr            error // a variable that could not be read, reported by finish
	smtpURL, smtpFrom string
	smtp              *email.SMTP // nil when email is off (no --smtp-url)
	vapidPrivateKey   string      // generated into the data folder when empty

	test testConfig
}

// testConfig is what tests of the whole server change, through run's tune
// functions; no flag or variable sets it.
type testConfig struct {
	fastWebhooks   bool          // webhooks.FastOptions
	fastEmail      bool          // email.FastOptions
	fastPush       bool          // push.FastOptions
	questionMinute time.Duration // store.SetQuestionMinute, when not 0
}

// hiddenFlags are registered but not listed by --help.
var hiddenFlags = map[string]bool{"pprof-addr": true, "mcp-sdk-only": true}

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
	fs.BoolVar(&c.mcpSDKOnly, "mcp-sdk-only", false, "the MCP SDK answers every /mcp request, also those the server answers from bytes built at start (for make bench)")
	fs.BoolVar(&c.trustProxy, "trust-proxy-headers", envOr("OSFOUNDRY_TRUST_PROXY_HEADERS", "") == "true", "take client addresses from X-Forwarded-For set by a loopback/private-network reverse proxy (OSFOUNDRY_TRUST_PROXY_HEADERS=true)")
	fs.BoolVar(&c.allowPrivate, "allow-private-targets", envOr("OSFOUNDRY_ALLOW_PRIVATE_TARGETS", "") == "true", "let outgoing requests (client ID metadata documents, webhooks) reach loopback, private-network, link-local and other non-public addresses, refused otherwise (OSFOUNDRY_ALLOW_PRIVATE_TARGETS=true)")
	fs.StringVar(&c.streamLimitsText, "stream-limits", envOr("OSFOUNDRY_STREAM_LIMITS", fmt.Sprintf("%d,%d,%d", live.DefaultLimits.PerSignIn, live.DefaultLimits.PerOwner, live.DefaultLimits.PerAddress)),
		"live streams held at once per sign-in, per owner and per client address: past the first two the oldest closes, past the third new ones are refused (OSFOUNDRY_STREAM_LIMITS)")
	fs.StringVar(&c.waitLimitsText, "wait-limits", envOr("OSFOUNDRY_WAIT_LIMITS", fmt.Sprintf("%d,%d", mcp.DefaultWaitLimits.PerConnection, mcp.DefaultWaitLimits.PerReplica)),
		"ask_owner calls waiting for an answer held at once per connection and per replica: past either, a call answers at once, open, saying its wait was not held (OSFOUNDRY_WAIT_LIMITS)")
	fs.StringVar(&c.pageLimitsText, "page-limits", envOr("OSFOUNDRY_PAGE_LIMITS", fmt.Sprintf("%d,%d", handlers.DefaultPageLimits.PerMinute, handlers.DefaultPageLimits.Burst)),
		"loads of search and the inbox per sign-in: a minute, in bursts of at most; past them a load gets 429 with Retry-After (OSFOUNDRY_PAGE_LIMITS)")
	c.metadataDocuments = true
	if v := os.Getenv("OSFOUNDRY_CLIENT_METADATA_DOCUMENTS"); v != "" {
		if err := c.metadataDocuments.Set(v); err != nil {
			c.envErr = fmt.Errorf("OSFOUNDRY_CLIENT_METADATA_DOCUMENTS=%q: %w", v, err)
		}
	}
	fs.Var(&c.metadataDocuments, "client-metadata-documents", "accept and advertise client ID metadata documents (a client_id that is an https URL, fetched by the server); "+
		"off for a server that cannot reach the clients' hosts, so that they register instead (OSFOUNDRY_CLIENT_METADATA_DOCUMENTS=off)")
	fs.StringVar(&c.smtpURL, "smtp-url", envOr("OSFOUNDRY_SMTP_URL", ""), "SMTP server that mails owners, smtp://user:password@host:587 (STARTTLS; ?tls=none for a local relay) or smtps://user:password@host:465; email is off when empty. A secret: set the variable (OSFOUNDRY_SMTP_URL)")
	fs.StringVar(&c.smtpFrom, "smtp-from", envOr("OSFOUNDRY_SMTP_FROM", ""), "sender address of the mail, like \"osFoundry <osfoundry@example.com>\"; needed with --smtp-url (OSFOUNDRY_SMTP_FROM)")
	fs.StringVar(&c.vapidPrivateKey, "vapid-private-key", envOr("OSFOUNDRY_VAPID_PRIVATE_KEY", ""), "the Web Push (VAPID) private key, a P-256 scalar in base64url, the same on every replica; generated into the data folder (vapid.key) when empty. A secret: set the variable (OSFOUNDRY_VAPID_PRIVATE_KEY)")
	fs.StringVar(&c.opsAddr, "ops-addr", envOr("OSFOUNDRY_OPS_ADDR", ""), "loopback address of the operations listener: Prometheus /metrics and Go's /debug/pprof profiles; off when empty (OSFOUNDRY_OPS_ADDR)")
	// The old name of --ops-addr still works, with a warning.
	if v := os.Getenv("OSFOUNDRY_PPROF_ADDR"); v != "" && c.opsAddr == "" {
		c.opsAddr = v
		c.deprecated = append(c.deprecated, "OSFOUNDRY_PPROF_ADDR")
	}
	fs.Func("pprof-addr", "deprecated: use --ops-addr", func(v string) error {
		c.opsAddr = v
		c.deprecated = append(c.deprecated, "--pprof-addr")
		return nil
	})
}

// secretFlags map the secret flags to the variable to set instead: anyone on
// the machine can read a command line (ps, /proc/<pid>/cmdline).
var secretFlags = map[string]string{"session-key": "OSFOUNDRY_SESSION_KEY", "database-url": "DATABASE_URL", "smtp-url": "OSFOUNDRY_SMTP_URL",
	"vapid-private-key": "OSFOUNDRY_VAPID_PRIVATE_KEY"}

// urlFlags are the secret flags that are secrets only when they hold a password.
var urlFlags = map[string]bool{"database-url": true, "smtp-url": true}

func (c *config) noteSecretFlags(fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) {
		if _, ok := secretFlags[f.Name]; ok && (!urlFlags[f.Name] || maskURL(f.Value.String()) != f.Value.String()) {
			c.exposed = append(c.exposed, f.Name)
		}
	})
}

// onOff is a switch flag, written on or off (true and false work too).
type onOff bool

func (o *onOff) String() string {
	if o != nil && *o {
		return "on"
	}
	return "off"
}

func (o *onOff) Set(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true":
		*o = true
	case "off", "false":
		*o = false
	default:
		return errors.New("use on or off")
	}
	return nil
}

// IsBoolFlag lets the flag stand alone, meaning on.
func (o *onOff) IsBoolFlag() bool { return true }

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

// finish checks the flags. A --base-url not given stays empty: serve derives
// it from --addr, token create reads the one the server recorded.
func (c *config) finish() error {
	if c.envErr != nil {
		return c.envErr
	}
	c.baseURL = strings.TrimRight(c.baseURL, "/")
	if c.baseURL != "" && !strings.HasPrefix(c.baseURL, "http://") && !strings.HasPrefix(c.baseURL, "https://") {
		return fmt.Errorf("--base-url %q: must start with http:// or https://", c.baseURL)
	}
	limits, err := parseStreamLimits(c.streamLimitsText)
	if err != nil {
		return err
	}
	c.streamLimits = limits
	if c.waitLimits, err = parseWaitLimits(c.waitLimitsText); err != nil {
		return err
	}
	if c.pageLimits, err = parsePageLimits(c.pageLimitsText); err != nil {
		return err
	}
	return c.finishSMTP()
}

func (c *config) finishSMTP() error {
	if c.smtpURL == "" {
		return nil
	}
	s, err := email.ParseSMTPURL(c.smtpURL)
	if err != nil {
		// Not repeated: the URL may hold the password where maskURL cannot find it.
		return fmt.Errorf("--smtp-url: %w", err)
	}
	if c.smtpFrom == "" {
		return errors.New("--smtp-from: give the sender address of the mail (OSFOUNDRY_SMTP_FROM), like \"osFoundry <osfoundry@example.com>\"; --smtp-url needs it")
	}
	if s.From, err = email.ParseFrom(c.smtpFrom); err != nil {
		return fmt.Errorf("--smtp-from: %w", err)
	}
	c.smtp = &s
	return nil
}

// parseStreamLimits reads "per sign-in,per owner,per address".
func parseStreamLimits(s string) (live.Limits, error) {
	parts := strings.Split(s, ",")
	var n [3]int
	if len(parts) != 3 {
		return live.Limits{}, fmt.Errorf("--stream-limits %q: give three numbers, per sign-in,per owner,per address (like 8,16,64)", s)
	}
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return live.Limits{}, fmt.Errorf("--stream-limits %q: give three numbers of at least 1, per sign-in,per owner,per address (like 8,16,64)", s)
		}
		n[i] = v
	}
	return live.Limits{PerSignIn: n[0], PerOwner: n[1], PerAddress: n[2]}, nil
}

// parseWaitLimits reads "per connection,per replica".
func parseWaitLimits(s string) (mcp.WaitLimits, error) {
	a, b, ok := strings.Cut(s, ",")
	per, err1 := strconv.Atoi(strings.TrimSpace(a))
	all, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || per < 1 || all < per {
		return mcp.WaitLimits{}, fmt.Errorf("--wait-limits %q: give two numbers, per connection,per replica, the second at least the first (like 8,2000)", s)
	}
	return mcp.WaitLimits{PerConnection: per, PerReplica: all}, nil
}

// parsePageLimits reads "a minute,burst".
func parsePageLimits(s string) (handlers.PageLimits, error) {
	a, b, ok := strings.Cut(s, ",")
	rate, err1 := strconv.Atoi(strings.TrimSpace(a))
	burst, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || rate < 1 || burst < 1 {
		return handlers.PageLimits{}, fmt.Errorf("--page-limits %q: give two numbers of at least 1, a minute,burst (like 60,20)", s)
	}
	return handlers.PageLimits{PerMinute: rate, Burst: burst}, nil
}

// listenBaseURL is http://<addr>, with localhost for a wildcard host.
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
	smtp, from := "off", ""
	if c.smtp != nil {
		smtp, from = maskURL(c.smtpURL), c.smtpFrom
	}
	key := "generated (data folder)"
	if c.sessionKey != "" {
		key = "configured (masked)"
	}
	vapid := "generated (data folder)"
	if c.vapidPrivateKey != "" {
		vapid = "configured (masked)"
	}
	l.Info("configuration", "addr", c.addr, "base_url", c.baseURL, "data_dir", c.dataDir, "database", db,
		"session_key", key, "log_level", c.logLevel, "allow_private_targets", c.allowPrivate,
		"client_metadata_documents", c.metadataDocuments.String(), "ops_addr", c.opsAddr,
		"trust_proxy_headers", c.trustProxy, "stream_limits", c.streamLimitsText, "wait_limits", c.waitLimitsText, "page_limits", c.pageLimitsText, "smtp", smtp, "smtp_from", from, "vapid_key", vapid)
	if c.smtp == nil {
		l.Info("email off: --smtp-url (OSFOUNDRY_SMTP_URL) is not set; no mail is sent")
	}
	for _, d := range c.deprecated {
		l.Warn(d + " is deprecated: use --ops-addr (OSFOUNDRY_OPS_ADDR)")
	}
	for _, name := range c.exposed {
		l.Warn("--" + name + " was given on the command line, where anyone on this machine can read it: set " + secretFlags[name] + " instead")
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

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
