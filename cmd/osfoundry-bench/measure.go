package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// step is one scenario at one concurrency for one round.
type step struct {
	calls, errors int
	// refused are calls refused past the write limit (limits.go), not
	// counted in errors.
	refused       int
	firstError    string
	perSecond     float64
	p50, p95, p99 float64 // ms
	serverRSSMB   float64
	// all are the step's calls, kept for its tail (--tail).
	all  []slowCall
	tail *tailBreakdown
}

// measure runs every scenario of plan at every level, rounds times over:
// within a round, level by level, each scenario's step in plan order, so
// that a tool and its physical limit are measured within the same minute and
// a slow moment of the machine tends to hit both. Each row of the report
// holds the medians over the rounds. With probe (--tail), each step's tail
// is read around it (tail.go).
func (r *report) measure(plan []scenario, levels []int, rounds int, d time.Duration, serverPID int, probe func(server bool) tailProbe) error {
	type key struct {
		name string
		c    int
	}
	steps := map[key][]step{}
	for round := range rounds {
		for _, c := range levels {
			for _, sc := range plan {
				if sc.before != nil {
					if err := sc.before(); err != nil {
						return fmt.Errorf("%s: %w", sc.name, err)
					}
				}
				var before tailProbe
				server := sc.tool != "" && !strings.HasSuffix(sc.name, sdkSuffix)
				if probe != nil {
					before = probe(server)
				}
				s := closedLoop(c, d, sc.call, probe != nil)
				if probe != nil {
					s.tail, s.all = breakdown(sc, before, probe(server), s.all, s.p99), nil
				}
				if serverPID > 0 {
					s.serverRSSMB = rssMB(serverPID)
				}
				fmt.Fprintf(os.Stderr, "  round %d  %-26s c=%-3d %9.0f calls/s  p99 %6.2f ms  errors %d  refused %d\n", round+1, sc.name, c, s.perSecond, s.p99, s.errors, s.refused)
				steps[key{sc.name, c}] = append(steps[key{sc.name, c}], s)
			}
		}
	}
	for _, sc := range plan {
		for _, c := range levels {
			r.Results = append(r.Results, summarize(sc, c, steps[key{sc.name, c}]))
		}
	}
	r.finish(plan)
	return nil
}

// summarize is one row: medians over the rounds, totals of calls and errors.
func summarize(sc scenario, c int, steps []step) result {
	res := result{Scenario: sc.name, Concurrency: c, Rounds: len(steps)}
	var nearest float64
	median := func(f func(step) float64) float64 {
		v := make([]float64, len(steps))
		for i, s := range steps {
			v[i] = f(s)
		}
		slices.Sort(v)
		n := len(v)
		if n%2 == 1 {
			return v[n/2]
		}
		return (v[n/2-1] + v[n/2]) / 2
	}
	for _, s := range steps {
		res.Calls += s.calls
		res.Errors += s.errors
		res.Refused += s.refused
		if res.FirstError == "" {
			res.FirstError = s.firstError
		}
		res.PerSecondByRound = append(res.PerSecondByRound, round1(s.perSecond))
		res.ServerRSSMB = max(res.ServerRSSMB, s.serverRSSMB)
	}
	res.PerSecond = median(func(s step) float64 { return s.perSecond })
	res.P50ms = median(func(s step) float64 { return s.p50 })
	res.P95ms = median(func(s step) float64 { return s.p95 })
	res.P99ms = median(func(s step) float64 { return s.p99 })
	// The tail of the round whose p99 is nearest the median.
	for _, s := range steps {
		if s.tail != nil && (res.Tail == nil || math.Abs(s.p99-res.P99ms) < math.Abs(nearest-res.P99ms)) {
			res.Tail, nearest = s.tail, s.p99
		}
	}
	return res
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

// closedLoop runs call in a closed loop on c workers for d; keep keeps
// every call's latency in the step's all.
func closedLoop(c int, d time.Duration, call func(w, i int) error, keep bool) step {
	lat := make([][]time.Duration, c)
	errs, refused := make([]int, c), make([]int, c)
	var firstErr atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline) && i < 1_000_000; i++ {
				t0 := time.Now()
				err := call(w, i)
				lat[w] = append(lat[w], time.Since(t0))
				switch {
				case err == nil:
				case isRefused(err):
					refused[w]++
				default:
					errs[w]++
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	nerr, nref := 0, 0
	for w := range c {
		all = append(all, lat[w]...)
		nerr += errs[w]
		nref += refused[w]
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
	}
	s := step{calls: len(all), errors: nerr, refused: nref, perSecond: float64(len(all)) / elapsed.Seconds(), p50: pct(.50), p95: pct(.95), p99: pct(.99)}
	if v, ok := firstErr.Load().(string); ok {
		s.firstError = v
	}
	if keep {
		for w := range c {
			for i, l := range lat[w] {
				s.all = append(s.all, slowCall{w: w, i: i, ms: float64(l.Microseconds()) / 1000})
			}
		}
	}
	return s
}
