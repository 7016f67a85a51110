package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// result is one scenario at one concurrency: medians over the rounds. The
// table's columns carry the same names as the JSON fields.
type result struct {
	Scenario    string `json:"scenario"`
	Concurrency int    `json:"concurrency"`
	Rounds      int    `json:"rounds"`
	// Calls and Errors are totals over the rounds.
	Calls  int `json:"calls"`
	Errors int `json:"errors"`
	// Refused are the calls refused past the write limit (limits.go):
	// not errors, but a sign the step wrote past what the project allows.
	Refused    int    `json:"refused"`
	FirstError string `json:"first_error,omitempty"`
	// PerSecond is the median of the rounds' calls/s, listed in PerSecondByRound.
	PerSecond        float64   `json:"calls_per_second"`
	PerSecondByRound []float64 `json:"calls_per_second_by_round"`
	P50ms            float64   `json:"p50_ms"`
	P95ms            float64   `json:"p95_ms"`
	P99ms            float64   `json:"p99_ms"`
	// ServerRSSMB is the server's resident memory after the step, the most of the rounds.
	ServerRSSMB float64 `json:"server_rss_mb,omitempty"`
	// Physical names the physical scenario RatioToPhysical divides by.
	Physical string `json:"physical,omitempty"`
	// RatioToPhysical is calls/s over the physical scenario's at the same concurrency.
	RatioToPhysical *float64 `json:"ratio_to_physical,omitempty"`
	// Composite is the composite ceiling at the same concurrency: one
	// physical HTTP round trip plus the physical statement,
	// 1 / (1/http + 1/statement) calls/s; the round trip alone for a method
	// that runs no statement. RatioToComposite is calls/s over it.
	Composite        *float64 `json:"composite_calls_per_second,omitempty"`
	RatioToComposite *float64 `json:"ratio_to_composite,omitempty"`
	// PhysicalCall names the tool's physical call (physical_call.go), the
	// round trip for a method that runs no statement;
	// RatioToPhysicalCall is calls/s over its at the same concurrency.
	PhysicalCall        string   `json:"physical_call,omitempty"`
	RatioToPhysicalCall *float64 `json:"ratio_to_physical_call,omitempty"`
	// Tail is where the slowest 1 % of the calls went (--tail, tail.go).
	Tail *tailBreakdown `json:"tail,omitempty"`
}

type report struct {
	Mode             string    `json:"mode"`
	URL              string    `json:"url"`
	Started          time.Time `json:"started"`
	Rounds           int       `json:"rounds"`
	DurationPerStep  string    `json:"duration_per_step"`
	CPUs             int       `json:"cpus"`
	LoadAverageStart string    `json:"load_average_start"`
	LoadAverageEnd   string    `json:"load_average_end"`
	Results          []result  `json:"results"`
	MaxServerRSSMB   float64   `json:"max_server_rss_mb"`
	// StatementsDuringUnchangedPolls is the server's own count of statements
	// sent to PostgreSQL while serving 200 unchanged polls
	// (osfoundry_db_statements_total{origin="request"}).
	StatementsDuringUnchangedPolls *int64 `json:"db_statements_during_200_unchanged_polls,omitempty"`
	// Streams is the live streams scenario (streams.go).
	Streams *streamsResult `json:"live_streams,omitempty"`
	// PhysicalHTTPBytes is the size of the physical HTTP round trip's
	// answer: the median of the tools' answers (physical_http.go).
	PhysicalHTTPBytes int `json:"physical_http_answer_bytes"`
	// Scale is every tool and owner page at each note count of --scale, and
	// ScaleDatabase the database at each (scale.go).
	Scale         []scaleRow      `json:"scale,omitempty"`
	ScaleDatabase []scaleDatabase `json:"scale_database,omitempty"`
	// Answers is the answer scenario (questions.go).
	Answers *answerResult `json:"answer_to_waiting_ask_owner,omitempty"`
	// FastPaths pairs each MCP scenario with its " [SDK]" twin (fast_paths.go).
	FastPaths []fastPath `json:"fast_paths,omitempty"`
}

// finish computes each scenario's ratio to its physical limit.
func (r *report) finish(plan []scenario) {
	physical, call := map[string]string{}, map[string]string{}
	for _, sc := range plan {
		physical[sc.name], call[sc.name] = sc.physical, sc.physicalCall
	}
	limit := map[string]float64{}
	for _, x := range r.Results {
		limit[x.Scenario+"@"+strconv.Itoa(x.Concurrency)] = x.PerSecond
		r.MaxServerRSSMB = max(r.MaxServerRSSMB, x.ServerRSSMB)
	}
	for i, x := range r.Results {
		at := "@" + strconv.Itoa(x.Concurrency)
		if pc := call[x.Scenario]; limit[pc+at] > 0 {
			ratio := x.PerSecond / limit[pc+at]
			r.Results[i].PhysicalCall, r.Results[i].RatioToPhysicalCall = pc, &ratio
		}
		p := physical[x.Scenario]
		l := limit[p+at]
		if p == "" || l <= 0 {
			continue
		}
		ratio := x.PerSecond / l
		r.Results[i].Physical, r.Results[i].RatioToPhysical = p, &ratio
		ceiling := l
		if p != physicalHTTP {
			h := limit[physicalHTTP+at]
			if h <= 0 {
				continue
			}
			ceiling = 1 / (1/h + 1/l)
		}
		toCeiling := x.PerSecond / ceiling
		r.Results[i].Composite, r.Results[i].RatioToComposite = &ceiling, &toCeiling
	}
	r.FastPaths = r.fastPaths()
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nosfoundry-bench — mode %s, rounds %d, %s per step (figures: medians of the rounds), %d CPUs, server %s\n", r.Mode, r.Rounds, r.DurationPerStep, r.CPUs, r.URL)
	fmt.Fprintf(w, "load average (1, 5, 15 min): %s at start, %s at end\n\n", r.LoadAverageStart, r.LoadAverageEnd)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tconcurrency\tcalls/s\tp50 ms\tp95 ms\tp99 ms\terrors\trefused\tratio to physical\tcomposite/s\tratio to composite\tratio to physical call\tserver RSS MB\t")
	for _, x := range r.Results {
		ratio, composite, toComposite := "-", "-", "-"
		if x.RatioToPhysical != nil {
			ratio = fmt.Sprintf("%.1f %%", *x.RatioToPhysical*100)
		}
		if x.Composite != nil {
			composite, toComposite = fmt.Sprintf("%.0f", *x.Composite), fmt.Sprintf("%.1f %%", *x.RatioToComposite*100)
		}
		toCall := "-"
		if x.RatioToPhysicalCall != nil {
			toCall = fmt.Sprintf("%.1f %%", *x.RatioToPhysicalCall*100)
		}
		rss := "-"
		if x.ServerRSSMB > 0 {
			rss = fmt.Sprintf("%.0f", x.ServerRSSMB)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", x.Scenario, x.Concurrency, x.PerSecond, x.P50ms, x.P95ms, x.P99ms, x.Errors, x.Refused, ratio, composite, toComposite, toCall, rss)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nratio to physical: write tools to %q, read tools to %q, tools/list and initialize to %q, at the same concurrency\n",
		physicalInsert, physicalMailPage, physicalHTTP)
	fmt.Fprintf(w, "composite: 1 / (1/http + 1/statement), %q (%d-byte answers) and the tool's physical statement at the same concurrency\n",
		physicalHTTP, r.PhysicalHTTPBytes)
	fmt.Fprintf(w, "physical call: each tool over %q, its statement behind a minimal handler in one process, at the same concurrency\n", physicalCallPrefix+"<tool>")
	if r.MaxServerRSSMB > 0 {
		fmt.Fprintf(w, "max server RSS: %.0f MB\n", r.MaxServerRSSMB)
	}
	if r.StatementsDuringUnchangedPolls != nil {
		fmt.Fprintf(w, "db statements during 200 unchanged polls: %d\n", *r.StatementsDuringUnchangedPolls)
	}
	if s := r.Streams; s != nil {
		fmt.Fprintf(w, "\n%s: %d open Team mail streams (opened in %.1f s)\n", streamsScenario, s.Streams, s.OpenSeconds)
		if s.ServerRSSMB > 0 {
			fmt.Fprintf(w, "  server RSS %.0f MB (%.0f MB before), goroutines %d (%d before)\n", s.ServerRSSMB, s.ServerRSSBeforeMB, s.Goroutines, s.GoroutinesBefore)
		}
		fmt.Fprintf(w, "  one note to all %d streams, %d notes: p50 %.1f ms, p99 %.1f ms per stream; all reached in %.1f ms (median), %.1f ms (worst); %d events missing\n",
			s.Streams, s.Notes, s.P50ms, s.P99ms, s.LastP50ms, s.LastMaxms, s.Missing)
	}
	r.printTail(w)
	r.printFastPaths(w)
	r.printScale(w)
	if a := r.Answers; a != nil {
		fmt.Fprintf(w, "\n%s: %d questions, each answered while its call waited: p50 %.1f ms, p99 %.1f ms, max %.1f ms; %d failed\n",
			answerScenario, a.Questions, a.P50ms, a.P99ms, a.Maxms, a.Failed)
		if a.FirstError != "" {
			fmt.Fprintf(w, "  first error: %s\n", a.FirstError)
		}
	}
	for _, x := range r.Results {
		if x.FirstError != "" {
			fmt.Fprintf(w, "first error of %s at %d: %s\n", x.Scenario, x.Concurrency, x.FirstError)
		}
	}
}

func rssMB(pid int) float64 {
	for _, line := range strings.Split(readFile(fmt.Sprintf("/proc/%d/status", pid)), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / 1024
			}
		}
	}
	return 0
}
