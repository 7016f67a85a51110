// Command testsummary reads `go test -json` on standard input and prints what
// `go test` prints without -v (each package's ok or FAIL line, the output of
// failing tests and of failing packages, build errors), then how many tests
// ran in each package and in all. It exits 1 when a test, a package or a build
// failed, so that
//
//	go test -json ./... | go run ./cmd/testsummary
//
// under `set -o pipefail` fails exactly when `go test ./...` would.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// event is one line of `go test -json` (see `go doc test2json`).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail
	Test       string
	Output     string
	Elapsed    float64
}

// pkg is what has been seen of one package so far.
type pkg struct {
	name                    string
	passed, failed, skipped int
	elapsed                 float64
	// lines is what a failing package prints: its own output and the output
	// of each test that failed, in the order they came.
	lines []string
	// running holds each unfinished test's output, in the order tests started.
	running map[string][]string
	order   []string
}

func main() {
	ok, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// summarize copies the plain report of the events on r to w and reports
// whether everything passed.
func summarize(r io.Reader, w io.Writer) (bool, error) {
	pkgs := map[string]*pkg{}
	var done []*pkg
	allOK := true
	get := func(name string) *pkg {
		p := pkgs[name]
		if p == nil {
			p = &pkg{name: name, running: map[string][]string{}}
			pkgs[name] = p
		}
		return p
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", line) // not an event: pass it on
			continue
		}
		switch e.Action {
		case "build-output":
			io.WriteString(w, e.Output)
			continue
		case "build-fail":
			allOK = false
			continue
		}
		p := get(e.Package)
		if e.Test != "" {
			switch e.Action {
			case "run":
				p.running[e.Test] = nil
				p.order = append(p.order, e.Test)
			case "output":
				if !isProgress(e.Output) {
					p.running[e.Test] = append(p.running[e.Test], e.Output)
				}
			case "pass", "skip", "fail":
				switch e.Action {
				case "pass":
					p.passed++
				case "skip":
					p.skipped++
				case "fail":
					p.failed++
					out := failure(e.Test, p.running[e.Test])
					// A subtest's failure shows inside its parent's, as go test prints it.
					if parent, ok := p.running[parentOf(e.Test)]; ok {
						p.running[parentOf(e.Test)] = append(parent, out...)
					} else {
						p.lines = append(p.lines, out...)
					}
				}
				delete(p.running, e.Test)
			}
			continue
		}
		switch e.Action {
		case "output":
			p.lines = append(p.lines, e.Output)
		case "pass", "skip", "fail":
			p.elapsed = e.Elapsed
			if e.Action == "fail" {
				allOK = false
				// Tests that never finished (a panic, a timeout) show what they printed.
				for _, name := range p.order {
					if out, ok := p.running[name]; ok {
						p.lines = append(p.lines, out...)
					}
				}
				io.WriteString(w, strings.Join(p.lines, ""))
			} else {
				// A package that passed shows its summary line alone, as go test does.
				for _, l := range p.lines {
					if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "? ") {
						io.WriteString(w, l)
					}
				}
			}
			done = append(done, p)
			delete(pkgs, e.Package)
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	// Packages without an end event: the test binary was killed or go test stopped.
	for _, p := range pkgs {
		allOK = false
		io.WriteString(w, strings.Join(p.lines, ""))
		done = append(done, p)
	}
	report(w, done)
	return allOK, nil
}

// failure arranges a failed test's output as go test prints it: the
// "--- FAIL" line first, then what the test logged, indented by its depth.
func failure(test string, out []string) []string {
	lines := slices.Clone(out)
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "--- FAIL") {
			head := lines[i]
			lines = slices.Insert(slices.Delete(lines, i, i+1), 0, head)
			break
		}
	}
	indent := strings.Repeat("    ", strings.Count(test, "/"))
	for i, l := range lines {
		lines[i] = indent + l
	}
	return lines
}

// parentOf names the test a subtest runs in ("" for a top-level test).
func parentOf(test string) string {
	if i := strings.LastIndex(test, "/"); i >= 0 {
		return test[:i]
	}
	return ""
}

// isProgress reports whether a test's output line only marks progress
// (=== RUN, PAUSE, CONT, NAME), which go test without -v does not print.
func isProgress(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// report prints one line per package that has tests, then the totals.
func report(w io.Writer, pkgs []*pkg) {
	slices.SortFunc(pkgs, func(a, b *pkg) int { return strings.Compare(a.name, b.name) })
	width := 0
	for _, p := range pkgs {
		width = max(width, len(p.name))
	}
	var passed, failed, skipped int
	fmt.Fprintln(w, "\nGo tests per package:")
	for _, p := range pkgs {
		if p.passed+p.failed+p.skipped == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-*s %4d passed, %d failed, %d skipped  %6.1fs\n", width, p.name, p.passed, p.failed, p.skipped, p.elapsed)
		passed, failed, skipped = passed+p.passed, failed+p.failed, skipped+p.skipped
	}
	fmt.Fprintf(w, "total: %d passed, %d failed, %d skipped\n", passed, failed, skipped)
}
