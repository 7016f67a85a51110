package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime/metrics"
	"slices"
	"strings"
)

// The tail (--tail): where the slowest 1 % of a step's calls spend their
// time. For a physical call, the handler's own phases of exactly those calls
// (its Server-Timing: pool acquire, statement, handler); for a tool, what
// the server already exports on its operations listener, read before and
// after the step: its handler time per tool, the pool's waits, its GC
// pauses; and, in every step, the scheduling latency and GC pauses of the
// load generator and of the physical calls' server (runtime/metrics).

// slowCall is one call of a step: who made it and how long it took.
type slowCall struct {
	w, i int
	ms   float64
}

// tailBreakdown is one step's tail; the figures a step could not measure are
// left out.
type tailBreakdown struct {
	// SlowCalls are the slowest 1 % of the step's calls, SlowMeanMs their
	// mean latency as the client saw it.
	SlowCalls  int     `json:"slow_calls"`
	SlowMeanMs float64 `json:"slow_mean_ms"`
	// For a physical call, the means of those calls' phases in its handler,
	// and what the handler did not see (HTTP, both sides' scheduling).
	SlowAcquireMs   *float64 `json:"slow_acquire_ms,omitempty"`
	SlowStatementMs *float64 `json:"slow_statement_ms,omitempty"`
	SlowHandlerMs   *float64 `json:"slow_handler_ms,omitempty"`
	SlowOutsideMs   *float64 `json:"slow_outside_handler_ms,omitempty"`
	// For a tool, from the server's osfoundry_mcp_tool_call_duration_seconds:
	// its handler's mean and p99 (a bucket's upper bound), and the share of
	// its calls that took longer than the client's p99 (1 % if the tail is
	// all the handler's; a lower bound, by the buckets).
	ServerHandlerMeanMs *float64 `json:"server_handler_mean_ms,omitempty"`
	ServerHandlerP99Ms  *float64 `json:"server_handler_p99_ms,omitempty"`
	ServerOverClientP99 *float64 `json:"server_calls_over_client_p99,omitempty"`
	// The server's pool (osfoundry_db_pool_*): mean acquire and the share
	// of acquires that waited for a connection.
	PoolAcquireMeanMs *float64 `json:"pool_acquire_mean_ms,omitempty"`
	PoolWaited        *float64 `json:"pool_waited,omitempty"`
	// The server's GC pauses during the step (go_gc_duration_seconds).
	ServerGCPauses  *int     `json:"server_gc_pauses,omitempty"`
	ServerGCPauseMs *float64 `json:"server_gc_pause_ms,omitempty"`
	// The server's scheduling latency p99 (a bucket's upper bound), when it
	// exports it.
	ServerSchedP99Ms *float64 `json:"server_sched_p99_ms,omitempty"`
	// The load generator's and the physical calls' server's scheduling
	// latency p99 and GC pauses (/sched/latencies:seconds,
	// /sched/pauses/total/gc:seconds).
	LoadGenSchedP99Ms  float64  `json:"loadgen_sched_p99_ms"`
	LoadGenGCPauses    int      `json:"loadgen_gc_pauses"`
	LoadGenGCPauseMs   float64  `json:"loadgen_gc_pause_ms"`
	PhysicalSchedP99Ms *float64 `json:"physical_server_sched_p99_ms,omitempty"`
}

// slowest returns the slowest 1 % of calls (at least one).
func slowest(calls []slowCall) []slowCall {
	slices.SortFunc(calls, func(a, b slowCall) int { return cmpFloat(b.ms, a.ms) })
	return calls[:min(len(calls), max(1, len(calls)/100))]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hist is a histogram of runtime/metrics, or of a Prometheus series: counts
// per bucket, Bounds[i] the upper bound of Counts[i] (seconds).
type hist struct {
	Counts []float64 `json:"counts"`
	Bounds []float64 `json:"bounds"`
}

// sub is h less an earlier reading of it.
func (h hist) sub(before hist) hist {
	out := hist{Counts: slices.Clone(h.Counts), Bounds: h.Bounds}
	if len(before.Counts) == len(h.Counts) {
		for i := range out.Counts {
			out.Counts[i] -= before.Counts[i]
		}
	}
	return out
}

func (h hist) total() (n float64) {
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// quantile is the upper bound (ms) of the bucket where q of the counts are
// reached.
func (h hist) quantile(q float64) float64 {
	n, seen := h.total(), 0.0
	for i, c := range h.Counts {
		seen += c
		if n > 0 && seen >= q*n {
			return h.Bounds[i] * 1000
		}
	}
	return 0
}

// sumMs estimates the histogram's sum, each count at its bucket's upper
// bound (the lower one for the last, unbounded bucket).
func (h hist) sumMs() (s float64) {
	for i, c := range h.Counts {
		b := h.Bounds[i]
		if b >= math.MaxFloat64 && i > 0 {
			b = h.Bounds[i-1]
		}
		s += c * b * 1000
	}
	return s
}

// runtimeHists are a process's scheduling latencies and GC pauses.
type runtimeHists struct {
	Sched hist `json:"sched"`
	GC    hist `json:"gc"`
}

// readRuntime reads this process's runtimeHists.
func readRuntime() runtimeHists {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}, {Name: "/sched/pauses/total/gc:seconds"}}
	metrics.Read(s)
	conv := func(v metrics.Value) hist {
		if v.Kind() != metrics.KindFloat64Histogram {
			return hist{}
		}
		fh := v.Float64Histogram()
		h := hist{}
		for i, c := range fh.Counts {
			h.Counts = append(h.Counts, float64(c))
			h.Bounds = append(h.Bounds, min(fh.Buckets[i+1], math.MaxFloat64))
		}
		return h
	}
	return runtimeHists{Sched: conv(s[0].Value), GC: conv(s[1].Value)}
}

// serveRuntime answers the physical calls' server's runtimeHists.
func serveRuntime(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(readRuntime())
}

// fetchRuntime reads the runtimeHists of the physical calls' server.
func (fx *fixture) fetchRuntime() (runtimeHists, error) {
	var r runtimeHists
	res, err := http.Get(strings.TrimSuffix(fx.physicalURL, "/mcp") + "/runtime")
	if err != nil {
		return r, err
	}
	defer res.Body.Close()
	return r, json.NewDecoder(res.Body).Decode(&r)
}

// promSample is one line of a Prometheus text exposition.
type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape reads the server's /metrics.
func (fx *fixture) scrape() ([]promSample, error) {
	res, err := http.Get(fx.metricsURL)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	var out []promSample
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(value, &v); err != nil {
			continue
		}
		s := promSample{name: series, labels: map[string]string{}, value: v}
		if name, rest, ok := strings.Cut(series, "{"); ok {
			s.name = name
			for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					s.labels[k] = strings.Trim(v, `"`)
				}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// sum adds the samples named name whose labels hold match.
func sum(ss []promSample, name string, match map[string]string) (v float64) {
	for _, s := range ss {
		if s.name == name && holds(s.labels, match) {
			v += s.value
		}
	}
	return v
}

func holds(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// promHist is the histogram name of the samples whose labels hold match,
// all other labels added up, as counts per bucket.
func promHist(ss []promSample, name string, match map[string]string) hist {
	cum := map[float64]float64{}
	for _, s := range ss {
		if s.name != name+"_bucket" || !holds(s.labels, match) {
			continue
		}
		var le float64
		if s.labels["le"] == "+Inf" {
			le = math.MaxFloat64
		} else if _, err := fmt.Sscan(s.labels["le"], &le); err != nil {
			continue
		}
		cum[le] += s.value
	}
	var h hist
	for le := range cum {
		h.Bounds = append(h.Bounds, le)
	}
	slices.Sort(h.Bounds)
	prev := 0.0
	for _, le := range h.Bounds {
		h.Counts = append(h.Counts, cum[le]-prev)
		prev = cum[le]
	}
	return h
}

// tailProbe is what a step's tail reads before and after it.
type tailProbe struct {
	server   []promSample
	loadgen  runtimeHists
	physical *runtimeHists
}

// probeTail reads them; server is false for a step that does not call the
// server whose /metrics the bench reads.
func (fx *fixture) probeTail(server bool) tailProbe {
	p := tailProbe{loadgen: readRuntime()}
	if server && fx.metricsURL != "" {
		p.server, _ = fx.scrape()
	}
	if r, err := fx.fetchRuntime(); err == nil {
		p.physical = &r
	}
	return p
}

// breakdown is the tail of a step of sc, from the probes before and after
// it and its calls, given its client-side p99 (ms).
func breakdown(sc scenario, before, after tailProbe, calls []slowCall, p99 float64) *tailBreakdown {
	t := &tailBreakdown{}
	slow := slowest(calls)
	t.SlowCalls = len(slow)
	var acq, db, handler, outside float64
	timed := 0
	for _, c := range slow {
		t.SlowMeanMs += c.ms / float64(len(slow))
		if sc.phases == nil {
			continue
		}
		if p, ok := sc.phases(c.w, c.i); ok {
			timed++
			acq, db, handler, outside = acq+p.acquire, db+p.db, handler+p.handler, outside+c.ms-p.handler
		}
	}
	if timed > 0 {
		n := float64(timed)
		t.SlowAcquireMs, t.SlowStatementMs, t.SlowHandlerMs, t.SlowOutsideMs = ptr(acq/n), ptr(db/n), ptr(handler/n), ptr(outside/n)
	}
	if before.server != nil && after.server != nil {
		tool := map[string]string{"tool": sc.tool}
		h := promHist(after.server, "osfoundry_mcp_tool_call_duration_seconds", tool).sub(promHist(before.server, "osfoundry_mcp_tool_call_duration_seconds", tool))
		if n := h.total(); n > 0 {
			took := sum(after.server, "osfoundry_mcp_tool_call_duration_seconds_sum", tool) - sum(before.server, "osfoundry_mcp_tool_call_duration_seconds_sum", tool)
			t.ServerHandlerMeanMs = ptr(took * 1000 / n)
			t.ServerHandlerP99Ms = ptr(h.quantile(0.99))
			over := 0.0
			for i, c := range h.Counts {
				if i > 0 && h.Bounds[i-1]*1000 >= p99 {
					over += c
				}
			}
			t.ServerOverClientP99 = ptr(over / n)
		}
		d := func(name string) float64 { return sum(after.server, name, nil) - sum(before.server, name, nil) }
		if n := d("osfoundry_db_pool_acquires_total"); n > 0 {
			t.PoolAcquireMeanMs = ptr(d("osfoundry_db_pool_acquire_duration_seconds_total") * 1000 / n)
			t.PoolWaited = ptr(d("osfoundry_db_pool_empty_acquires_total") / n)
		}
		pauses := int(d("go_gc_duration_seconds_count"))
		t.ServerGCPauses, t.ServerGCPauseMs = &pauses, ptr(d("go_gc_duration_seconds_sum")*1000)
		if s := promHist(after.server, "go_sched_latencies_seconds", nil).sub(promHist(before.server, "go_sched_latencies_seconds", nil)); s.total() > 0 {
			t.ServerSchedP99Ms = ptr(s.quantile(0.99))
		}
	}
	t.LoadGenSchedP99Ms = after.loadgen.Sched.sub(before.loadgen.Sched).quantile(0.99)
	gc := after.loadgen.GC.sub(before.loadgen.GC)
	t.LoadGenGCPauses, t.LoadGenGCPauseMs = int(gc.total()), gc.sumMs()
	if before.physical != nil && after.physical != nil {
		t.PhysicalSchedP99Ms = ptr(after.physical.Sched.sub(before.physical.Sched).quantile(0.99))
	}
	return t
}

func ptr[T any](v T) *T { return &v }

// printTail prints the tails of the tools and their physical calls, briefly.
func (r *report) printTail(w io.Writer) {
	header := false
	for _, x := range r.Results {
		t := x.Tail
		if t == nil || x.Concurrency == 1 {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\ntail: the slowest 1 %% of each step's calls (the median round's); ms\n")
			header = true
		}
		var b strings.Builder
		fmt.Fprintf(&b, "  %s at %d: p99 %.1f, slowest 1 %% (%d calls) mean %.1f", x.Scenario, x.Concurrency, x.P99ms, t.SlowCalls, t.SlowMeanMs)
		if t.SlowHandlerMs != nil {
			fmt.Fprintf(&b, " = handler %.1f (acquire %.2f, statement %.1f) + outside it %.1f", *t.SlowHandlerMs, *t.SlowAcquireMs, *t.SlowStatementMs, *t.SlowOutsideMs)
		}
		if t.ServerHandlerP99Ms != nil {
			fmt.Fprintf(&b, "; server handler mean %.1f, p99 ≤ %.0f, ≥ %.1f %% of its calls over the client's p99", *t.ServerHandlerMeanMs, *t.ServerHandlerP99Ms, *t.ServerOverClientP99*100)
		}
		if t.PoolAcquireMeanMs != nil {
			fmt.Fprintf(&b, "; pool acquire mean %.2f, %.0f %% waited", *t.PoolAcquireMeanMs, *t.PoolWaited*100)
		}
		if t.ServerGCPauses != nil {
			fmt.Fprintf(&b, "; server GC %d pauses %.1f", *t.ServerGCPauses, *t.ServerGCPauseMs)
		}
		b.WriteString("; sched p99")
		if t.ServerSchedP99Ms != nil {
			fmt.Fprintf(&b, " server ≤ %.2f,", *t.ServerSchedP99Ms)
		}
		fmt.Fprintf(&b, " load generator %.2f", t.LoadGenSchedP99Ms)
		if t.PhysicalSchedP99Ms != nil {
			fmt.Fprintf(&b, ", physical server %.2f", *t.PhysicalSchedP99Ms)
		}
		fmt.Fprintf(&b, "; load generator GC %d pauses %.1f", t.LoadGenGCPauses, t.LoadGenGCPauseMs)
		fmt.Fprintln(w, b.String())
	}
}
