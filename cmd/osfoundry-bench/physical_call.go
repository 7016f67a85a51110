package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/testfactory"
)

// The physical tool call: the honest ceiling of a tool call on a machine
// whose cores the load generator, the server and PostgreSQL share. The
// physical HTTP round trip's server (physical_http.go) also answers /call:
// it decodes the JSON-RPC body, runs the tool's physical statement
// (testfactory.RunPhysical) on a pool of its own, sized as the osfoundry
// server's, and writes a result of the tool's size around the rows. The
// load generator sends it the tool's own request, plus the statement's
// arguments by internal id, in the same rounds as the tool.

// physicalCallPrefix names a tool's physical call scenario.
const physicalCallPrefix = "physical call: "

// timingHeader asks the physical call for its phases in Server-Timing
// (--tail only).
const timingHeader = "Bench-Timing"

// physicalCallHandler serves the physical tool calls on pool.
func physicalCallHandler(pool *pgxpool.Pool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Name      string                   `json:"name"`
				Arguments json.RawMessage          `json:"arguments"`
				Physical  testfactory.PhysicalArgs `json:"physical"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ctx := r.Context()
		conn, err := pool.Acquire(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		t1 := time.Now()
		rows, err := testfactory.RunPhysical(ctx, conn, req.Params.Name, req.Params.Physical)
		conn.Release()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		t2 := time.Now()
		body, err := toolResult(req.ID, rows, req.Params.Physical.Bytes)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if r.Header.Get(timingHeader) != "" {
			ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64) }
			w.Header().Set("Server-Timing", "acquire;dur="+ms(t1.Sub(t0))+", db;dur="+ms(t2.Sub(t1))+", handler;dur="+ms(time.Since(t0)))
		}
		_, _ = w.Write(body)
	}
}

// toolResult is a tools/call result shaped as a tool's, its JSON as text
// and as structured content, holding rows, padded to at least size bytes.
func toolResult(id json.RawMessage, rows [][]any, size int) ([]byte, error) {
	data, err := json.Marshal(map[string]any{"rows": rows})
	if err != nil {
		return nil, err
	}
	build := func(data []byte) []byte {
		text, _ := json.Marshal(string(data))
		return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":` + string(text) +
			`}],"structuredContent":` + string(data) + `}}`)
	}
	b := build(data)
	if pad := (size - len(b) - 20) / 2; pad > 0 {
		b = build(append(data[:len(data)-1], `,"pad":"`+strings.Repeat("x", pad)+`"}`...))
	}
	return b, nil
}

// physicalCallPool is the physical call's pool on dsn, as many connections
// as the osfoundry server's, opened at once (as the server's are after its
// first steps), so that no call's time is a connection's set-up.
func physicalCallPool(dsn string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns, cfg.MinConns = store.DefaultMaxConns, store.DefaultMaxConns
	return pgxpool.NewWithConfig(context.Background(), cfg)
}

// phases are a physical call's, from its Server-Timing, in ms.
type phases struct{ acquire, db, handler float64 }

// parseServerTiming reads the phases of a Server-Timing header.
func parseServerTiming(h string) (p phases, ok bool) {
	for _, part := range strings.Split(h, ",") {
		name, dur, found := strings.Cut(strings.TrimSpace(part), ";dur=")
		if !found {
			continue
		}
		v, err := strconv.ParseFloat(dur, 64)
		if err != nil {
			continue
		}
		switch name {
		case "acquire":
			p.acquire = v
		case "db":
			p.db = v
		case "handler":
			p.handler, ok = v, true
		}
	}
	return p, ok
}

// phaseLog holds the phases of one step's physical calls, by worker and
// call, when --tail asks for them.
type phaseLog struct {
	mu sync.Mutex
	by map[[2]int]phases
}

func (l *phaseLog) reset() { l.mu.Lock(); l.by = map[[2]int]phases{}; l.mu.Unlock() }

func (l *phaseLog) put(w, i int, p phases) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[[2]int]phases{}
	}
	l.by[[2]int{w, i}] = p
}

func (l *phaseLog) get(w, i int) (phases, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.by[[2]int{w, i}]
	return p, ok
}

// physicalCall is worker w's i-th physical call of tool: the tool's request
// with args, and the statement's arguments a.
func (fx *fixture) physicalCall(tool string, w, i int, args map[string]any, a testfactory.PhysicalArgs) error {
	a.Bytes = fx.answerBytes[tool]
	params := map[string]any{"name": tool, "arguments": args, "physical": a}
	if !fx.tail {
		_, err := fx.post(fx.physicalCallURL, fx.agents[w].token, "tools/call", params)
		return err
	}
	_, h, err := fx.postHeader(fx.physicalCallURL, fx.agents[w].token, "tools/call", params, http.Header{timingHeader: {"1"}})
	if p, ok := parseServerTiming(h.Get("Server-Timing")); ok {
		fx.phases.put(w, i, p)
	}
	return err
}

// physicalCallScenario is tool's physical call, run right before the tool:
// phys gives worker w's statement arguments for its i-th call.
func (fx *fixture) physicalCallScenario(tool string, args func(w, i int) map[string]any, phys func(w, i int) testfactory.PhysicalArgs) scenario {
	return scenario{name: physicalCallPrefix + tool,
		before: func(int) error { fx.phases.reset(); return nil },
		call:   func(w, i int) error { return fx.physicalCall(tool, w, i, args(w, i), phys(w, i)) },
		phases: fx.phases.get,
	}
}

// checkPhysicalCalls makes each tool's physical call once, as worker 0, so
// that a statement that does not fit the schema stops the bench at once.
func (fx *fixture) checkPhysicalCalls(plan []scenario) error {
	for _, sc := range plan {
		if strings.HasPrefix(sc.name, physicalCallPrefix) {
			if err := sc.call(0, 0); err != nil {
				return fmt.Errorf("%s: %w", sc.name, err)
			}
		}
	}
	return nil
}
