package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/osfoundry/osfoundry/handlers"
	"github.com/osfoundry/osfoundry/handlers/inbound"
	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/timers"
	"github.com/osfoundry/osfoundry/webhook"
)

// serveCommand is `osfoundry serve`, the default: the web app and the MCP
// endpoint until SIGINT or SIGTERM.
type serveCommand struct{}

func (serveCommand) flags(*flag.FlagSet) {}

// defaultGCPercent trades memory for CPU: the MCP SDK allocates ≈0.4 MB of
// garbage per request while the live heap stays in the tens of MB.
const defaultGCPercent = 400

func (serveCommand) run(ctx context.Context, cfg config, log *slog.Logger) error {
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
	vapid, err := vapidKeys(cfg)
	if err != nil {
		return err
	}
	setupCode, setupWatch, err := offerSetupCode(ctx, st, cfg.dataDir, log)
	if err != nil {
		return err
	}
	if setupWatch != nil {
		defer setupWatch.stop()
	}
	m := metrics.New()
	m.WatchStore(st)
	m.WatchEmailOutbox(st)
	m.WatchPushOutbox(st)
	// The listener keeps the mail cache current; it stops before the pool closes.
	listener := st.NewListener(log)
	mail := st.NewMailCache(listener)
	m.WatchListener(listener, mail)
	// The webhook sender finishes what it has in flight before the pool closes.
	senderOpts := webhook.Options{Store: st, BaseURL: cfg.baseURL, Logger: log, AllowPrivateTargets: cfg.allowPrivate}
	if cfg.test.fastWebhooks {
		log.Warn("webhook test timing in use: retries, leases and sweeps are shortened")
		senderOpts = webhook.FastOptions(senderOpts)
	}
	sender := webhook.New(senderOpts)
	sender.WakeOn(listener)
	stopEmail := startEmail(ctx, cfg, st, listener, log)
	defer stopEmail()
	stopPush := startPush(ctx, cfg, vapid, st, listener, log)
	defer stopPush()
	listenerRun := startBackground(ctx, listener.Run)
	defer listenerRun.stop()
	senderRun := startBackground(ctx, sender.Run)
	defer senderRun.stop()
	// Every replica runs the question timers; each due timer is claimed by one.
	if cfg.test.questionMinute > 0 {
		log.Warn("question test timing in use: a minute of the question delays lasts", "minute", cfg.test.questionMinute)
		st.SetQuestionMinute(cfg.test.questionMinute)
	}
	questionTimers := timers.New(timers.Options{Store: st, Logger: log, Compose: questionEmail(cfg), ComposeApproval: approvalEmail(cfg)})
	questionTimers.WakeOn(listener)
	timersRun := startBackground(ctx, questionTimers.Run)
	defer timersRun.stop()
	h := handlers.New(handlers.Deps{
		Store:    st,
		Listener: listener,
		Mail:     mail,
		Logger:   log,
		Metrics:  m,
		Config: handlers.Config{BaseURL: cfg.baseURL, SessionHashKey: hashKey, SessionBlockKey: blockKey, TrustProxyHeaders: cfg.trustProxy,
			AllowPrivateTargets: cfg.allowPrivate, NoClientMetadataDocuments: !bool(cfg.metadataDocuments), StreamLimits: cfg.streamLimits,
			WaitLimits: cfg.waitLimits, PageLimits: cfg.pageLimits, Email: cfg.smtp != nil, MCPSDKOnly: cfg.mcpSDKOnly, VAPIDPublicKey: vapid.PublicKey()},
		SendInvite: inviteEmail(cfg),
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
		if err := serveOps(cfg.opsAddr, inbound.PublicHost(cfg.baseURL), m, log); err != nil {
			return err
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("osfoundry is ready", "took", time.Since(begin).Round(time.Millisecond))
	fmt.Fprintf(os.Stderr, "\n  osFoundry is running at %s\n  MCP endpoint: %s/mcp\n", cfg.baseURL, cfg.baseURL)
	if setupCode != "" {
		fmt.Fprintf(os.Stderr, "  First run: open %s/setup and enter the setup code %s\n  (also in %s until the first owner exists).\n",
			cfg.baseURL, setupCode, filepath.Join(cfg.dataDir, setupCodeFile))
	}
	fmt.Fprintf(os.Stderr, "  Press Ctrl-C to stop.\n\n")

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "drain_timeout", cfg.shutdown)
	// Live streams never finish by themselves: end them first, so that the
	// drain waits for requests only. Browsers reconnect and replay.
	h.CloseStreams()
	senderRun.cancel()
	timersRun.cancel()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("requests still running at the drain timeout were cut off", "err", err)
	}
	return nil
}
