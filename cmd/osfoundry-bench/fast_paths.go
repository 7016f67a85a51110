package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// The server answers some MCP requests itself, in front of the MCP SDK (a
// fast path); one stays only where it gains at least 20 % calls/s at
// concurrency 8 for its method (docs/performance.md). So that each is
// measured with and without it in one run, the bench starts a second server
// on the same database with --mcp-sdk-only, and runs each MCP scenario
// against both, one right after the other.

// sdkSuffix marks the twin of an MCP scenario that the SDK answers.
const sdkSuffix = " [SDK]"

// minFastPathGain is the gain at concurrency 8 a fast path must show.
const minFastPathGain = 0.20

// withSDKTwins derives the calls of the MCP scenarios in s, and puts each
// one's twin against the --mcp-sdk-only server right after it.
func (fx *fixture) withSDKTwins(s []scenario) []scenario {
	out := make([]scenario, 0, 2*len(s))
	for _, sc := range s {
		if sc.mcp == nil {
			out = append(out, sc)
			continue
		}
		mcp := sc.mcp
		sc.call = func(w, i int) error { return mcp(fx.url, w, i) }
		out = append(out, sc)
		if fx.sdkURL != "" {
			twin := sc
			twin.name += sdkSuffix
			twin.call = func(w, i int) error { return mcp(fx.sdkURL, w, i) }
			out = append(out, twin)
		}
	}
	return out
}

// fastPath is one MCP scenario with and without the front's own answers.
type fastPath struct {
	Scenario    string  `json:"scenario"`
	Concurrency int     `json:"concurrency"`
	With        float64 `json:"calls_per_second_with"`
	Without     float64 `json:"calls_per_second_without"`
	// Gain is With over Without, less one.
	Gain float64 `json:"gain"`
}

// fastPaths pairs each MCP scenario's figures with its twin's.
func (r *report) fastPaths() []fastPath {
	by := map[string]float64{}
	for _, x := range r.Results {
		by[x.Scenario+"@"+strconv.Itoa(x.Concurrency)] = x.PerSecond
	}
	var out []fastPath
	for _, x := range r.Results {
		if strings.HasSuffix(x.Scenario, sdkSuffix) {
			continue
		}
		without, ok := by[x.Scenario+sdkSuffix+"@"+strconv.Itoa(x.Concurrency)]
		if !ok || without <= 0 {
			continue
		}
		out = append(out, fastPath{Scenario: x.Scenario, Concurrency: x.Concurrency, With: x.PerSecond, Without: without, Gain: x.PerSecond/without - 1})
	}
	return out
}

func (r *report) printFastPaths(w io.Writer) {
	if len(r.FastPaths) == 0 {
		return
	}
	fmt.Fprintf(w, "\nfast paths: calls/s with the server's own answers and with the SDK answering (%s), same run\n", strings.TrimSpace(sdkSuffix))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tconcurrency\twith\twithout\tgain\tkeep (≥ 20 % at 8)\t")
	for _, f := range r.FastPaths {
		keep := ""
		if f.Concurrency == 8 {
			keep = "no"
			if f.Gain >= minFastPathGain {
				keep = "yes"
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%+.0f %%\t%s\t\n", f.Scenario, f.Concurrency, f.With, f.Without, f.Gain*100, keep)
	}
	tw.Flush()
}
