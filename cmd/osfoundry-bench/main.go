// Command osfoundry-bench measures osFoundry under closed-loop load: each MCP
// tool an agent calls in a hot loop, the anonymous tools/list, and the owner's
// unchanged Team mail poll, at several concurrencies; and, in the same run and
// against the same PostgreSQL, the physical limit of what they do (one
// statement per call straight through pgx), and each tool's physical call
// (its statement behind a minimal HTTP handler), so that each tool can be
// read as a fraction of what the database alone allows and of the simplest
// call that does its work.
//
// Steps run in rounds, physical and tool steps interleaved, and the figures
// are the medians over the rounds, so that the noise of a shared machine hits
// both sides alike.
//
// By default it starts its own private PostgreSQL and an osfoundry server
// process (built from this checkout); with --url and DATABASE_URL it targets
// a running server instead.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/pgserver"
)

type options struct {
	mode        string
	url         string
	databaseURL string
	out         string
	levels      []int
	rounds      int
	duration    time.Duration
	sessions    int
	opsAddr     string
	only        string
	streams     int
	streamNotes int
	searchNotes int
	scale       []int
	questions   int
	tail        bool
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "osfoundry-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var o options
	var levels, scale, serveAddr string
	var serveBytes int
	flag.StringVar(&o.mode, "mode", "short", "short (about four minutes in all) or full (about half an hour, steadier figures)")
	flag.StringVar(&o.url, "url", "", "base URL of a running server to measure (needs DATABASE_URL of its database); default: start one")
	flag.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "database of the --url server (DATABASE_URL)")
	flag.StringVar(&o.out, "json", "bench-results.json", "where to write the results as JSON")
	flag.StringVar(&levels, "concurrency", "1,8,32", "comma-separated concurrency levels")
	flag.IntVar(&o.rounds, "rounds", 0, "rounds of every step (default: 2 short, 3 full); the figures are the medians")
	flag.DurationVar(&o.duration, "step", 0, "duration of one step (default: 750ms short, 5s full)")
	flag.IntVar(&o.sessions, "sessions", 8, "sessions the write load is spread over")
	flag.StringVar(&o.opsAddr, "ops-addr", "", "the server's operations listener (loopback): where the bench starts it (default: a free port), or where the --url server has it, to read its statement count")
	flag.StringVar(&o.only, "only", "", "run only the scenarios whose name contains this text")
	flag.IntVar(&o.streams, "streams", 2000, "live Team mail streams to hold open in the \""+streamsScenario+"\" scenario (0: skip it)")
	flag.IntVar(&o.streamNotes, "stream-notes", 20, "notes timed across all the open streams")
	flag.IntVar(&o.searchNotes, "search-notes", 0, "fill a workspace of its own with this many notes (1000000 for the published figures; minutes) and add the \""+searchPrefix+": …\" scenarios (0: none)")
	flag.StringVar(&scale, "scale", "", "comma-separated note counts (10000,1000000 for the published figures; minutes) at which to measure every tool and owner page over a spread of "+
		"workspaces of their own, the \"scale\" section (empty: none)")
	flag.StringVar(&serveAddr, "serve-http", "", "serve the physical HTTP round trip and the physical tool calls (on DATABASE_URL) on this address and nothing else (the bench starts itself so)")
	flag.IntVar(&serveBytes, "serve-http-bytes", defaultResultBytes, "the size of the physical HTTP round trip's result")
	flag.IntVar(&o.questions, "questions", 60, "questions answered while their ask_owner call waits, timed from the owner's click to the answer (0: skip)")
	flag.BoolVar(&o.tail, "tail", false, "break each step's slowest 1 % of calls down: the physical calls' phases, the server's handler time, pool waits and GC pauses, and scheduling latencies (tail in the JSON)")
	flag.Parse()
	if serveAddr != "" {
		return serveHTTP(serveAddr, serveBytes, o.databaseURL)
	}
	for _, v := range strings.Split(scale, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("--scale: %q is not a note count", v)
		}
		o.scale = append(o.scale, n)
	}
	rounds, step := 2, 750*time.Millisecond
	switch o.mode {
	case "short":
	case "full":
		rounds, step = 3, 5*time.Second
	default:
		return fmt.Errorf("--mode %q: use short or full", o.mode)
	}
	if o.rounds == 0 {
		o.rounds = rounds
	}
	if o.duration == 0 {
		o.duration = step
	}
	if o.rounds < 1 || o.duration <= 0 {
		return errors.New("--rounds and --step must be positive")
	}
	for _, s := range strings.Split(levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > maxWorkers {
			return fmt.Errorf("--concurrency: %q is not a number from 1 to %d", s, maxWorkers)
		}
		o.levels = append(o.levels, n)
	}
	if o.url != "" && o.databaseURL == "" {
		return errors.New("--url needs DATABASE_URL (or --database-url) of that server's database to prepare data")
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	report := &report{Mode: o.mode, Started: time.Now().UTC(), Rounds: o.rounds, DurationPerStep: o.duration.String(),
		CPUs: runtimeCPUs(), LoadAverageStart: loadAverage()}
	fmt.Fprintf(os.Stderr, "load average at start: %s\n", report.LoadAverageStart)

	var serverPID int
	var sdkURL string
	if o.url == "" {
		tmp, err := os.MkdirTemp("", "osfbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		_ = os.Chmod(tmp, 0o711)
		fmt.Fprintln(os.Stderr, "starting a private PostgreSQL and an osfoundry server …")
		pg, err := pgserver.Start(ctx, pgserver.Options{DataDir: filepath.Join(tmp, "pg"), Database: "bench", Logger: log})
		if err != nil {
			return err
		}
		defer pg.Stop()
		o.databaseURL = pg.DSN
		bin := filepath.Join(tmp, "osfoundry")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/osfoundry").CombinedOutput(); err != nil {
			return fmt.Errorf("build osfoundry: %v\n%s", err, out)
		}
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		o.url = "http://" + addr
		if o.opsAddr == "" {
			if o.opsAddr, err = freeAddr(); err != nil {
				return err
			}
		}
		// The streams scenario holds all its streams on one sign-in from one
		// address: the server's stream limits must let it (a --url server
		// needs its --stream-limits raised the same way). The scale
		// scenario opens one after another, each closed as its first event
		// arrives, which the server may not have seen yet.
		limit := max(o.streams, 64)
		args := []string{"--data-dir", tmp, "--log-level", "warn", "--stream-limits", fmt.Sprintf("%d,%d,%d", limit, limit, limit),
			"--page-limits", benchPageLimits}
		cmd, err := startServer(bin, pg.DSN, o.url, append(args, "--ops-addr", o.opsAddr))
		if err != nil {
			return err
		}
		serverPID = cmd.Process.Pid
		defer stopServer(cmd)
		// The twin whose SDK answers every MCP request (fast_paths.go):
		// the same base URL, so that the agents' tokens hold for it too.
		if sdkAddr, err := freeAddr(); err != nil {
			return err
		} else {
			sdkDir := filepath.Join(tmp, "sdk-only")
			if err := os.Mkdir(sdkDir, 0o700); err != nil {
				return err
			}
			args[1] = sdkDir
			sdk, err := startServer(bin, pg.DSN, o.url, append(args, "--addr", sdkAddr, "--mcp-sdk-only"))
			if err != nil {
				return err
			}
			defer stopServer(sdk)
			sdkURL = "http://" + sdkAddr
		}
	}
	o.url = strings.TrimRight(o.url, "/")
	report.URL = o.url

	st, err := store.Open(ctx, o.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	fx, err := prepare(ctx, st, o)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	fx.sdkURL = sdkURL
	// The physical scenarios talk to PostgreSQL themselves, on a pool of their own.
	physCfg, err := pgxpool.ParseConfig(o.databaseURL)
	if err != nil {
		return err
	}
	physCfg.MaxConns = maxWorkers
	if fx.pool, err = pgxpool.NewWithConfig(ctx, physCfg); err != nil {
		return err
	}
	defer fx.pool.Close()
	if o.opsAddr != "" {
		fx.metricsURL = "http://" + o.opsAddr + "/metrics"
	}
	size, err := fx.typicalAnswer()
	if err != nil {
		return fmt.Errorf("size the physical HTTP round trip: %w", err)
	}
	base, stopHTTP, err := startPhysicalHTTP(size, o.databaseURL)
	if err != nil {
		return err
	}
	defer stopHTTP()
	fx.physicalURL, fx.physicalCallURL, report.PhysicalHTTPBytes = base+"/mcp", base+"/call", size
	if o.searchNotes > 0 {
		fmt.Fprintf(os.Stderr, "filling the search workspace with %d notes …\n", o.searchNotes)
		if err := fx.prepareSearch(ctx, st, fx.pool, o.searchNotes); err != nil {
			return fmt.Errorf("prepare search: %w", err)
		}
	}

	var plan []scenario
	for _, sc := range scenarios(ctx, fx) {
		if o.only == "" || strings.Contains(sc.name, o.only) {
			plan = append(plan, sc)
		}
	}
	if err := fx.checkPhysicalCalls(plan); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "measuring %d scenarios × %v concurrency × %d rounds, %v each …\n", len(plan), o.levels, o.rounds, o.duration)
	var probe func(bool) tailProbe
	if fx.tail = o.tail; o.tail {
		probe = fx.probeTail
	}
	if err := report.measure(plan, o.levels, o.rounds, o.duration, serverPID, probe); err != nil {
		return err
	}
	if n, err := fx.pollStatements(); err == nil {
		report.StatementsDuringUnchangedPolls = &n
	} else {
		fmt.Fprintln(os.Stderr, "statements during unchanged polls not measured:", err)
	}
	if o.streams > 0 && (o.only == "" || strings.Contains(streamsScenario, o.only)) {
		fmt.Fprintf(os.Stderr, "opening %d live streams …\n", o.streams)
		sr, err := fx.runStreams(o.streams, o.streamNotes, serverPID, o.opsAddr)
		if err != nil {
			return fmt.Errorf("%s: %w", streamsScenario, err)
		}
		report.Streams = sr
	}
	if len(o.scale) > 0 {
		sc, err := fx.runScale(ctx, st, o.scale)
		if err != nil {
			return fmt.Errorf("scale: %w", err)
		}
		report.Scale, report.ScaleDatabase = sc.rows, sc.database
	}
	if o.questions > 0 && (o.only == "" || strings.Contains(answerScenario, o.only)) {
		fmt.Fprintf(os.Stderr, "answering %d questions while their agent waits …\n", o.questions)
		ar, err := fx.runAnswers(ctx, o.questions)
		if err != nil {
			return fmt.Errorf("%s: %w", answerScenario, err)
		}
		report.Answers = ar
	}
	report.LoadAverageEnd = loadAverage()
	report.print(os.Stdout)
	b, _ := json.MarshalIndent(report, "", "  ")
	if err := os.WriteFile(o.out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "results written to %s\n", o.out)
	return nil
}

func runtimeCPUs() int {
	n, _ := strconv.Atoi(strings.TrimSpace(readFile("/sys/fs/cgroup/cpu.max")))
	if n > 0 {
		return n
	}
	b, _ := exec.Command("nproc").Output()
	n, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	f := strings.Fields(readFile("/proc/loadavg"))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func readFile(p string) string { b, _ := os.ReadFile(p); return string(b) }

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startServer starts the osfoundry binary bin serving base on dsn's
// database, and waits until it is ready. An --addr in args wins over base's.
func startServer(bin, dsn, base string, args []string) (*exec.Cmd, error) {
	addr := strings.TrimPrefix(base, "http://")
	full := append([]string{"serve", "--addr", addr, "--base-url", base}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := base
	for i, a := range args {
		if a == "--addr" && i+1 < len(args) {
			ready = "http://" + args[i+1]
		}
	}
	if err := waitReady(ready); err != nil {
		stopServer(cmd)
		return nil, err
	}
	return cmd, nil
}

func stopServer(cmd *exec.Cmd) { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }

func waitReady(base string) error {
	for range 600 {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("server at %s did not become ready", base)
}
