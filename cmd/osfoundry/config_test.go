package main

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// parseConfig registers the server's flags and parses args, with the
// environment as it is.
func parseConfig(t *testing.T, args ...string) config {
	t.Helper()
	var c config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAllowPrivateTargetsConfig: the flag is off by default, set by the flag
// or by OSFOUNDRY_ALLOW_PRIVATE_TARGETS=true, and printed at start.
func TestAllowPrivateTargetsConfig(t *testing.T) {
	t.Setenv("OSFOUNDRY_ALLOW_PRIVATE_TARGETS", "")
	if parseConfig(t).allowPrivate {
		t.Fatal("private targets allowed by default")
	}
	if !parseConfig(t, "--allow-private-targets").allowPrivate {
		t.Fatal("--allow-private-targets not honoured")
	}
	t.Setenv("OSFOUNDRY_ALLOW_PRIVATE_TARGETS", "true")
	c := parseConfig(t)
	if !c.allowPrivate {
		t.Fatal("OSFOUNDRY_ALLOW_PRIVATE_TARGETS=true not honoured")
	}
	if parseConfig(t, "--allow-private-targets=false").allowPrivate {
		t.Fatal("the flag does not override the environment")
	}
	var out bytes.Buffer
	c.log(slog.New(slog.NewTextHandler(&out, nil)))
	if !strings.Contains(out.String(), "allow_private_targets=true") {
		t.Fatalf("start-up configuration log lacks the setting: %s", out.String())
	}
}

// TestNoFlagForTests: every flag is the operator's. What tests of the whole
// server change is set in-process (config.test), by no flag or variable; the
// deprecated --pprof-addr works but --help leaves it out.
func TestNoFlagForTests(t *testing.T) {
	var c config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	c.register(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.Contains(f.Name, "test") || strings.Contains(f.Usage, "test") {
			t.Errorf("--%s is a flag for tests: %s", f.Name, f.Usage)
		}
	})
	printFlags(fs)
	if strings.Contains(out.String(), "pprof-addr") || !strings.Contains(out.String(), "-allow-private-targets") {
		t.Fatalf("--help lists:\n%s", out.String())
	}
}
